package slurm

import (
	"slices"
	"strings"
	"testing"
)

// FuzzValues feeds one string to every parser of the package: none may
// panic, each either errs or gives a value within its bounds, and the
// writers' output reads back to the same value (FormatDuration,
// Memory.String for whole MB, CompressHostlist).
func FuzzValues(f *testing.F) {
	for _, s := range []string{"00:07:00", "1-00:00:00", "0-5", "UNLIMITED", "2800Mc", "500000Mn", "4G",
		"n[1-4]", "n[01-10,12],g1", "r[1-2]n[1-2]", "gpu:2", "gpu:tesla:2", "billing=12,cpu=12,gres/gpu=2",
		"IB&(CPU-N|CPU-M)", "[a|b]", "!x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := Duration(s); err == nil {
			if d > MaxSeconds || d < Unknown {
				t.Fatalf("Duration(%q) = %d out of range", s, d)
			}
			if d >= 0 {
				back, err := Duration(FormatDuration(d))
				if err != nil || back != d {
					t.Fatalf("Duration(FormatDuration(%d)) = %d, %v", d, back, err)
				}
			}
		}
		if m, err := ParseMemory(s, PerNode); err == nil {
			if m.MB < 0 || m.MB > MaxMemoryMB || m.Per == 0 {
				t.Fatalf("ParseMemory(%q) = %+v", s, m)
			}
			if m.MB == float64(int64(m.MB)) && m.MB < 1e15 {
				back, err := ParseMemory(m.String(), PerCPU)
				if err != nil || back != m {
					t.Fatalf("ParseMemory(%q) = %+v, %v; from %+v", m.String(), back, err, m)
				}
			}
		}
		if names, err := Hostlist(s); err == nil {
			if len(names) > MaxHosts {
				t.Fatalf("Hostlist(%q): %d names", s, len(names))
			}
			if len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return strings.ContainsAny(n, "[],") || n == "" }) {
				back, err := Hostlist(CompressHostlist(names))
				if err != nil || !slices.Equal(back, names) {
					t.Fatalf("Hostlist(CompressHostlist(%q)) = %q, %v", names, back, err)
				}
			}
		}
		if n, err := GPUs(s); err == nil && (n < 0 || n > MaxGPUs) {
			t.Fatalf("GPUs(%q) = %d", s, n)
		}
		if e, err := Constraint(s); err == nil && len(e) > 4*len(s)+8 {
			t.Fatalf("Constraint(%q) = %q: longer than expected", s, e)
		}
		_ = Tag(s)
		_ = CheckName("x", s)
	})
}
