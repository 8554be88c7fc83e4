package sim

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// bruteTau is τ_b by its definition, over all pairs.
func bruteTau(x, y []int64) float64 {
	var c, d, tx, ty float64
	n := len(x)
	for i := range n {
		for j := i + 1; j < n; j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tx++
				ty++
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case (dx > 0) == (dy > 0):
				c++
			default:
				d++
			}
		}
	}
	n0 := float64(n*(n-1)) / 2
	return (c - d) / math.Sqrt((n0-tx)*(n0-ty))
}

// TestKendallTauByHand: x = 1 2 3 4, y = 1 3 2 4: five concordant pairs,
// one discordant (2-3), no ties: (5 − 1)/6 = 2/3. With ties, x = 1 1 2 3
// and y = 1 2 2 3: pairs 1-2 tied in x, 2-3 tied in y, the other four
// concordant: 4 / √(5 × 5) = 0.8.
func TestKendallTauByHand(t *testing.T) {
	if got := KendallTau([]int64{1, 2, 3, 4}, []int64{1, 3, 2, 4}); math.Abs(got-2.0/3) > 1e-15 {
		t.Errorf("no ties: %v; want 2/3", got)
	}
	if got := KendallTau([]int64{1, 1, 2, 3}, []int64{1, 2, 2, 3}); math.Abs(got-0.8) > 1e-15 {
		t.Errorf("ties: %v; want 0.8", got)
	}
	if got := KendallTau([]int64{4, 3, 2, 1}, []int64{1, 2, 3, 4}); got != -1 {
		t.Errorf("reversed: %v; want -1", got)
	}
	if !math.IsNaN(KendallTau([]int64{1, 1}, []int64{1, 2})) || !math.IsNaN(KendallTau([]int64{1}, []int64{1})) {
		t.Error("degenerate input: want NaN")
	}
}

// TestKendallTauBrute checks Knight's algorithm against the definition
// on random data with many ties.
func TestKendallTauBrute(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 60).Draw(t, "n")
		x := rapid.SliceOfN(rapid.Int64Range(0, 8), n, n).Draw(t, "x")
		y := rapid.SliceOfN(rapid.Int64Range(0, 8), n, n).Draw(t, "y")
		got, want := KendallTau(x, y), bruteTau(x, y)
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-want) > 1e-12 {
			t.Fatalf("KendallTau = %v; brute force %v", got, want)
		}
	})
}
