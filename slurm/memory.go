package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// Memory is a job's memory request, in MB (Slurm's megabytes of 2^20
// bytes, as slurm.conf's RealMemory counts them and xce's mem resource).
type Memory struct {
	// MB is the amount in MB; 0 with Per == 0 means no request.
	MB float64
	// Per says what the amount is for: PerNode (sbatch --mem, sacct's
	// "n" suffix) or PerCPU (--mem-per-cpu, DefMemPerCPU, the "c"
	// suffix); 0 when no memory was asked for.
	Per MemPer
}

// MemPer says whether a memory amount is per node or per CPU.
type MemPer uint8

// What a memory amount is for.
const (
	// PerNode: on each node of the job (sbatch --mem).
	PerNode MemPer = iota + 1
	// PerCPU: for each allocated CPU (sbatch --mem-per-cpu).
	PerCPU
)

// MaxMemoryMB bounds a memory amount: 10^15 MB (an exabyte).
const MaxMemoryMB = 1e15

// ParseMemory parses a memory size as sbatch(1) --mem and --mem-per-cpu
// and slurm.conf(5) (RealMemory, DefMemPerCPU) write it: a non-negative
// number, a decimal fraction allowed, optionally followed by a unit K, M,
// G or T (any case; KB, MB, GB, TB too; M by default: "Default units are
// megabytes", sbatch(1)), and, as sacct(1)'s ReqMem writes it up to Slurm
// 21.08, optionally by "c" (per CPU) or "n" (per node): "2800Mc",
// "500000Mn", "4Gn". per is what an amount without a c/n suffix is for.
// The result is in MB.
func ParseMemory(s string, per MemPer) (Memory, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return Memory{}, fmt.Errorf("memory %s: empty", Quote(s))
	}
	if len(v) > 64 {
		return Memory{}, fmt.Errorf("memory %s: too long", Quote(s))
	}
	switch v[len(v)-1] {
	case 'c':
		per, v = PerCPU, v[:len(v)-1]
	case 'n':
		per, v = PerNode, v[:len(v)-1]
	}
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	num, unit := v[:i], strings.ToUpper(v[i:])
	mb, err := decimal(num)
	if err != nil {
		return Memory{}, fmt.Errorf("memory %s: %w", Quote(s), err)
	}
	switch unit {
	case "", "M", "MB", "MIB":
	case "K", "KB", "KIB":
		mb /= 1024
	case "G", "GB", "GIB":
		mb *= 1024
	case "T", "TB", "TIB":
		mb *= 1024 * 1024
	default:
		return Memory{}, fmt.Errorf("memory %s: unknown unit %s (want K, M, G or T)", Quote(s), Quote(v[i:]))
	}
	if mb > MaxMemoryMB {
		return Memory{}, fmt.Errorf("memory %s: more than 10^15 MB", Quote(s))
	}
	return Memory{MB: mb, Per: per}, nil
}

// decimal parses digits with at most one '.', at most 20 digits in all.
func decimal(s string) (float64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if s == "" || s == "." || strings.Contains(frac, ".") || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%s: %w", Quote(s), errNotNumber)
	}
	if len(whole)+len(frac) > 20 {
		return 0, fmt.Errorf("%s: more than 20 digits", Quote(s))
	}
	return strconv.ParseFloat(s, 64)
}

// String writes m as sacct(1) writes ReqMem in Slurm 20.x: the amount in
// whole MB followed by "Mc" (per CPU) or "Mn" (per node); "" for no
// request. (A fraction of a MB is rounded to the nearest MB.)
func (m Memory) String() string {
	switch m.Per {
	case PerCPU:
		return fmt.Sprintf("%.0fMc", m.MB)
	case PerNode:
		return fmt.Sprintf("%.0fMn", m.MB)
	}
	return ""
}
