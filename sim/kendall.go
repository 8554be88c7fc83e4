package sim

import (
	"cmp"
	"math"
	"slices"
)

// KendallTau returns Kendall's rank correlation τ_b between x and y
// (paired, of equal length), with ties: τ_b = (C − D) / √((n0 − n1)(n0 −
// n2)), C and D the concordant and discordant pairs, n0 = n(n−1)/2 and
// n1, n2 the pairs tied in x and in y (Kendall 1945, "The treatment of
// ties in ranking problems", Biometrika 33(3)). It is computed in
// O(n log n) by Knight's algorithm (Knight 1966, "A computer method for
// calculating Kendall's tau with ungrouped data", JASA 61(314)). It is NaN
// when n < 2 or when either side is all one value.
func KendallTau(x, y []int64) float64 {
	n := len(x)
	if n != len(y) || n < 2 {
		return math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(x[a], x[b]), cmp.Compare(y[a], y[b])) })
	ties := func(equal func(i, j int) bool) int64 {
		var t, run int64 = 0, 1
		for i := 1; i <= n; i++ {
			if i < n && equal(i-1, i) {
				run++
				continue
			}
			t += run * (run - 1) / 2
			run = 1
		}
		return t
	}
	n1 := ties(func(i, j int) bool { return x[idx[i]] == x[idx[j]] })
	n3 := ties(func(i, j int) bool { return x[idx[i]] == x[idx[j]] && y[idx[i]] == y[idx[j]] })
	ys := make([]int64, n)
	for i, k := range idx {
		ys[i] = y[k]
	}
	swaps := inversions(ys, make([]int64, n))
	// ys is now sorted: count its ties.
	n2 := ties(func(i, j int) bool { return ys[i] == ys[j] })
	n0 := int64(n) * int64(n-1) / 2
	den := math.Sqrt(float64(n0-n1) * float64(n0-n2))
	if den == 0 {
		return math.NaN()
	}
	return float64(n0-n1-n2+n3-2*swaps) / den
}

// inversions sorts a (stably, by merging) and returns the pairs i < j with
// a[i] > a[j]; tmp is scratch of a's length.
func inversions(a, tmp []int64) int64 {
	if len(a) < 2 {
		return 0
	}
	m := len(a) / 2
	inv := inversions(a[:m], tmp[:m]) + inversions(a[m:], tmp[m:])
	i, j, k := 0, m, 0
	for i < m && j < len(a) {
		if a[j] < a[i] {
			inv += int64(m - i)
			tmp[k] = a[j]
			j++
		} else {
			tmp[k] = a[i]
			i++
		}
		k++
	}
	k += copy(tmp[k:], a[i:m])
	copy(tmp[k:], a[j:])
	copy(a, tmp)
	return inv
}
