// Package gpureq parses a job's GPU requirement in LSF's bsub -gpu syntax
// (IBM Spectrum LSF 10.1, bsub -gpu; "Submitting jobs that require GPU
// resources"):
//
//	num=2:mode=exclusive_process:j_exclusive=yes
//
// and turns it into what the scheduler reserves: rusage[ngpus_physical=N]
// on every host of the job (docs/gpus.md). xce supports num (with an
// optional /host), mode (shared or exclusive_process), j_exclusive=yes and
// mps=no; every other LSF keyword is refused with its column.
package gpureq

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/resreq"
)

// Resource is the name of the host consumable that counts a host's GPUs
// (LSF's ngpus_physical): its capacity on a host is the host's number of
// devices, and a job's rusage of it is a number of whole devices.
const Resource = "ngpus_physical"

// MaxDevices is the most GPUs a host may have and a job may ask for on
// one host: a host's devices are numbered 0 … MaxDevices-1.
const MaxDevices = 64

// MaxLen bounds the text Parse accepts, in bytes.
const MaxLen = 1024

// Mode is the GPU compute mode a job asks for. xce records it and gives
// it to the job (XCE_GPU_MODE); it does not set the devices' compute mode
// itself (docs/gpus.md).
type Mode uint8

const (
	// Shared is LSF's mode=shared, NVIDIA's DEFAULT compute mode: several
	// processes of the job may use a device (the default).
	Shared Mode = iota
	// ExclusiveProcess is LSF's mode=exclusive_process, NVIDIA's
	// EXCLUSIVE_PROCESS compute mode: one process per device.
	ExclusiveProcess
)

// String returns the bsub spelling: "shared" or "exclusive_process".
func (m Mode) String() string {
	if m == ExclusiveProcess {
		return "exclusive_process"
	}
	return "shared"
}

// Request is a parsed GPU requirement.
type Request struct {
	// Num is the number of devices the job needs on each of its hosts,
	// 1 … MaxDevices (LSF's default is 1).
	Num int
	// Mode is the compute mode the job asks for.
	Mode Mode
}

// Default is the requirement of `-gpu -` and of a requirement that does
// not give num: one device in shared mode, not shared with other jobs.
var Default = Request{Num: 1, Mode: Shared}

// String returns the canonical form, "num=N:mode=M", which Parse reads
// back to the same Request.
func (r Request) String() string {
	return "num=" + strconv.Itoa(r.Num) + ":mode=" + r.Mode.String()
}

// Error is a syntax or support error; Col is the 1-based byte column of
// the offending character in the string given (just past its end for an
// unexpected end).
type Error struct {
	Col int
	Msg string
}

// Error returns "gpu: col <Col>: <Msg>".
func (e *Error) Error() string { return fmt.Sprintf("gpu: col %d: %s", e.Col, e.Msg) }

func errorf(col int, format string, args ...any) *Error {
	return &Error{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// unsupported are LSF 10.1's -gpu keywords that xce does not support,
// with what to do instead.
var unsupported = map[string]string{
	"aff":     "xce does not bind CPUs to GPUs",
	"block":   "xce does not place tasks by GPU blocks",
	"gpack":   "xce does not pack jobs by GPU",
	"glink":   "xce does not know the devices' NVLink topology",
	"gvendor": "xce does not tell GPU vendors apart",
	"gmodel":  "select the hosts with -R \"select[gpu_model == NAME]\" instead",
	"gtile":   "xce does not tile GPUs over sockets",
	"gmem":    "xce does not count GPU memory",
	"mig":     "xce does not allocate MIG instances",
	"nvlink":  "xce does not know the devices' NVLink topology",
}

// Parse reads a GPU requirement: "-" (the default, one device), or
// keyword=value options separated by ':', each keyword at most once:
//
//	num=N[/host]              N devices per host, 1 … MaxDevices
//	mode=shared|exclusive_process
//	j_exclusive=yes           the only value xce supports (no device is
//	                          ever given to two jobs; j_exclusive=no is
//	                          refused: docs/gpus.md)
//	mps=no                    the only value xce supports
//
// Options left out take their defaults (num=1, mode=shared). num=N/task is
// refused: the reservation method of ngpus_physical (reservation_usage)
// decides whether N counts per host or per task. Errors are *Error with
// the column of what is wrong; Parse never panics, and its time is linear
// in len(s).
func Parse(s string) (Request, error) {
	r := Default
	if len(s) > MaxLen {
		return r, errorf(MaxLen+1, "longer than %d bytes", MaxLen)
	}
	if s == "-" {
		return r, nil
	}
	if s == "" {
		return r, errorf(1, "empty GPU requirement (give \"-\" for the default, num=1)")
	}
	seen := map[string]bool{}
	pos := 0 // byte offset of the current option
	for _, opt := range strings.Split(s, ":") {
		col := pos + 1
		pos += len(opt) + 1
		if opt == "" {
			return r, errorf(col, "empty option (options are keyword=value separated by ':')")
		}
		if i := strings.IndexFunc(opt, func(c rune) bool { return c == ' ' || c == '\t' }); i >= 0 {
			return r, errorf(col+i, "unexpected white space")
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok {
			return r, errorf(col+len(opt), "expected '=' after %s", quote(opt))
		}
		vcol := col + len(key) + 1
		if key == "" {
			return r, errorf(col, "missing keyword before '='")
		}
		if seen[key] {
			return r, errorf(col, "%s given twice", key)
		}
		seen[key] = true
		if val == "" {
			return r, errorf(vcol, "%s needs a value", key)
		}
		var err *Error
		switch key {
		case "num":
			r.Num, err = parseNum(val, vcol)
		case "mode":
			switch val {
			case "shared":
				r.Mode = Shared
			case "exclusive_process":
				r.Mode = ExclusiveProcess
			default:
				err = errorf(vcol, "mode must be shared or exclusive_process, got %s", quote(val))
			}
		case "j_exclusive":
			switch val {
			case "yes":
			case "no":
				err = errorf(vcol, "j_exclusive=no is not supported: xce never gives a device to two jobs at once (docs/gpus.md)")
			default:
				err = errorf(vcol, "j_exclusive must be yes or no, got %s", quote(val))
			}
		case "mps":
			if val != "no" {
				err = errorf(vcol, "mps=%s is not supported: xce does not start NVIDIA MPS daemons (only mps=no)", clip(val))
			}
		default:
			if why, ok := unsupported[key]; ok {
				err = errorf(col, "LSF's %s= is not supported by xce: %s", key, why)
			} else {
				err = errorf(col, "unknown keyword %s (xce supports num, mode, j_exclusive and mps=no)", quote(key))
			}
		}
		if err != nil {
			return Default, err
		}
	}
	return r, nil
}

// parseNum reads num's value, N or N/host, with col the value's column.
func parseNum(val string, col int) (int, *Error) {
	digits, unit, hasUnit := strings.Cut(val, "/")
	if hasUnit {
		switch unit {
		case "host":
		case "task":
			return 0, errorf(col+len(digits), "num=N/task is not supported: the reservation method of %s decides (reservation_usage: {%s: per_task} in the configuration; docs/reservation.md)", Resource, Resource)
		default:
			return 0, errorf(col+len(digits)+1, "expected host after '/', got %s", quote(unit))
		}
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, errorf(col, "num must be a whole number of devices, got %s", quote(digits))
	}
	if len(strings.TrimLeft(digits, "0")) > 4 {
		return 0, errorf(col, "num must be at most %d (the most devices a host may have), got %s", MaxDevices, clip(digits))
	}
	n, _ := strconv.Atoi(strings.TrimLeft(digits, "0")) // at most 4 digits; "" is 0
	switch {
	case n < 1:
		return 0, errorf(col, "num must be at least 1, got %d", n)
	case n > MaxDevices:
		return 0, errorf(col, "num must be at most %d (the most devices a host may have), got %d", MaxDevices, n)
	}
	return n, nil
}

// Merge returns req with the GPU requirement r added: rusage[ngpus_physical
// =r.Num] in its term. req is not changed. It fails for a compound or
// alternative requirement (LSF: use -R for those, with
// rusage[ngpus_physical=N] in the terms that need GPUs), and for one whose
// rusage[] already names ngpus_physical (the count is given once).
func Merge(req *resreq.Requirement, r Request) (*resreq.Requirement, error) {
	if req == nil || len(req.Alternatives) != 1 || len(req.Alternatives[0].Terms) != 1 || req.Alternatives[0].Terms[0].Count != 0 {
		return nil, fmt.Errorf("a GPU requirement (gpu, -gpu) goes with a simple resource requirement only: give a compound or alternative one rusage[%s=N] in its terms instead", Resource)
	}
	t := *req.Alternatives[0].Terms[0]
	for _, u := range t.Rusage {
		if u.Name == Resource {
			return nil, fmt.Errorf("the resource requirement's rusage[] already asks for %s: give the number of GPUs once, in rusage[] or in the GPU requirement", Resource)
		}
	}
	t.Rusage = append(slices.Clip(t.Rusage), resreq.Rusage{Name: Resource, Value: float64(r.Num)})
	return &resreq.Requirement{Alternatives: []*resreq.Compound{{Terms: []*resreq.Term{&t}}}}, nil
}

func quote(s string) string { return strconv.Quote(clip(s)) }

// clip cuts s to 40 bytes, on a character boundary, for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "..."
}

// Check returns Parse's error for s, or nil; "" (no GPU requirement) is
// nil too.
func Check(s string) error {
	if s == "" {
		return nil
	}
	_, err := Parse(s)
	return err
}
