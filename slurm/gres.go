package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxGPUs bounds a GPU count per node (xce's hosts have at most 64
// devices; a larger request is kept so that the job pends with
// BadRequest, but not beyond this).
const MaxGPUs = 1 << 20

// GPUs returns the GPUs per node a generic resource list asks for, as
// sbatch(1) --gres, slurm.conf's node Gres and sacct(1)'s ReqGRES write it
// ("gpu:2", "gpu:tesla:2", "gpu" for one, several items comma-separated:
// "gpu:2,mps:100"), or as sacct's ReqTRES/AllocTRES write it
// ("billing=12,cpu=12,gres/gpu=2,mem=33600M,node=1"; a typed entry
// "gres/gpu:tesla=2" counts too, unless the untyped total is given). Items
// that are not GPUs are ignored here; callers that must not drop them
// silently use OtherGRES. A count may carry a K, M or G multiplier
// (gres.conf(5)). "" and "(null)" are 0.
func GPUs(s string) (int, error) {
	v := strings.TrimSpace(s)
	if v == "" || v == "(null)" {
		return 0, nil
	}
	if len(v) > MaxValue {
		return 0, fmt.Errorf("gres %s: longer than %d bytes", Quote(s), MaxValue)
	}
	total, typed := -1, 0
	for _, it := range strings.Split(v, ",") {
		it = strings.TrimSpace(it)
		name, count, isTRES := it, "", false
		if k, val, ok := strings.Cut(it, "="); ok { // TRES form
			name, count, isTRES = k, val, true
			if !strings.HasPrefix(name, "gres/") {
				continue // cpu=, mem=, node=, billing=
			}
			name = strings.TrimPrefix(name, "gres/")
		}
		kind, rest, _ := strings.Cut(name, ":")
		if kind != "gpu" {
			continue
		}
		if !isTRES {
			// gpu, gpu:N, gpu:type, gpu:type:N
			parts := strings.Split(name, ":")
			switch {
			case len(parts) == 1:
				count = "1"
			case len(parts) > 3:
				return 0, fmt.Errorf("gres %s: %s has more than three ':'-separated fields", Quote(s), Quote(it))
			default:
				count = parts[len(parts)-1]
				if len(parts) == 2 && !startsDigit(count) {
					count = "1" // gpu:type
				}
			}
		}
		n, err := gresCount(count)
		if err != nil {
			return 0, fmt.Errorf("gres %s: %s: %w", Quote(s), Quote(it), err)
		}
		if isTRES && rest != "" {
			typed += n // gres/gpu:type=N, counted in gres/gpu=N when present
			continue
		}
		total = max(total, 0) + n
		if total > MaxGPUs {
			return 0, fmt.Errorf("gres %s: more than %d GPUs", Quote(s), MaxGPUs)
		}
	}
	if total < 0 {
		total = min(typed, MaxGPUs)
	}
	return total, nil
}

// OtherGRES returns the names of the generic resources of a --gres or
// Gres list that are not GPUs ("mps:100,gpu:2" gives [mps]), so that a
// reader can report what it does not model.
func OtherGRES(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		it = strings.TrimSpace(it)
		kind, _, _ := strings.Cut(it, ":")
		if kind != "" && kind != "gpu" && kind != "(null)" {
			out = append(out, kind)
		}
	}
	return out
}

func startsDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// gresCount parses a count with an optional K, M or G multiplier (of 1024).
func gresCount(s string) (int, error) {
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult, s = 1<<10, s[:len(s)-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:len(s)-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:len(s)-1]
		}
	}
	if !allDigits(s) || s == "" || len(s) > 12 {
		return 0, fmt.Errorf("count %s: %w", Quote(s), errNotNumber)
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	if n*mult > MaxGPUs {
		return MaxGPUs + 1, nil
	}
	return int(n * mult), nil
}
