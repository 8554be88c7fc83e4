package lublin

import "math"

// The model's implied distributions, worked out from its definition
// (docs/lublin.md) with the standard library only: sizes by integrating the
// two-stage uniform density over the rounding intervals, times by Simpson
// integration of gamma densities. None of this calls the generator.

// tsuMass returns P(lo <= X < hi) for X two-stage uniform with p's bounds.
func tsuMass(p Params, lo, hi float64) float64 {
	seg := func(a, b float64) float64 { // mass of U(a, b) in [lo, hi)
		if b <= a { // degenerate stage: a point mass at a
			if lo <= a && a < hi {
				return 1
			}
			return 0
		}
		l, h := math.Max(lo, a), math.Min(hi, b)
		if h <= l {
			return 0
		}
		return (h - l) / (b - a)
	}
	return p.UProb*seg(p.ULow, p.UMed) + (1-p.UProb)*seg(p.UMed, p.UHi)
}

// sizeDist returns P(size = s), index s = 0..nodes. A serial job has size
// 1; a power-of-two job 2^k when X rounds to k (k−0.5 <= X < k+0.5), capped
// at the largest power of two <= nodes; any other parallel job size m when
// 2^X rounds to m (m−0.5 <= 2^X < m+0.5), capped at nodes.
func sizeDist(p Params, nodes int) []float64 {
	d := make([]float64, nodes+1)
	d[1] += p.SerialProb
	maxK := 0
	for 1<<(maxK+1) <= nodes {
		maxK++
	}
	for k := 0; k <= 64; k++ {
		d[1<<min(k, maxK)] += p.Pow2Prob * tsuMass(p, float64(k)-0.5, float64(k)+0.5)
	}
	other := 1 - p.SerialProb - p.Pow2Prob
	for m := 1; m <= nodes; m++ {
		lo, hi := math.Log2(float64(m)-0.5), math.Log2(float64(m)+0.5)
		if m == 1 {
			lo = math.Inf(-1)
		}
		if m == nodes {
			hi = math.Inf(1)
		}
		d[m] += other * tsuMass(p, lo, hi)
	}
	return d
}

// gammaDensity returns the gamma(a, b) density.
func gammaDensity(a, b float64) func(float64) float64 {
	lg, _ := math.Lgamma(a)
	return func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return math.Exp((a-1)*math.Log(x) - x/b - lg - a*math.Log(b))
	}
}

// expMoments returns, for X ~ gamma(a, b), F = P(X <= top), and the
// partial moments I = E[e^X; X <= top] and J = E[e^(2X); X <= top].
func expMoments(a, b, top float64) (F, I, J float64) {
	f := gammaDensity(a, b)
	const n = 60000
	F = simpson(f, 0, top, n)
	I = simpson(func(x float64) float64 { return math.Exp(x) * f(x) }, 0, top, n)
	J = simpson(func(x float64) float64 { return math.Exp(2*x) * f(x) }, 0, top, n)
	return F, I, J
}

// expected holds a job type's implied statistics on a machine.
type expected struct {
	serial, pow2OfParallel float64 // P(size 1); P(power of two | size > 1)
	meanSize, varSize      float64
	meanRun, varRun        float64   // runtime e^X, X hyper-gamma given size, truncated at MaxLogRuntime
	runBySize, run2BySize  []float64 // E[runtime | size], E[runtime² | size]
	sizes                  []float64 // P(size = s)
	meanInter, varInter    float64   // inter-arrival e^G, G gamma truncated at MaxLogInterarrival
}

// expect computes the implied statistics of p on a machine of nodes nodes.
// The truncation at MaxLogRuntime redraws the whole mixture, so given the
// size the density of X is (w·f1 + (1−w)·f2) / (w·F1 + (1−w)·F2) on
// [0, MaxLogRuntime], with w = PA·size + PB clamped to [0, 1]. The
// generator reports floor(e^X), which lies within 1 s below e^X.
func expect(p Params, nodes int) expected {
	e := expected{sizes: sizeDist(p, nodes)}
	F1, I1, J1 := expMoments(p.A1, p.B1, MaxLogRuntime)
	F2, I2, J2 := expMoments(p.A2, p.B2, MaxLogRuntime)
	e.runBySize = make([]float64, nodes+1)
	e.run2BySize = make([]float64, nodes+1)
	var par, pow2, m2Size, m2Run float64
	for s := 1; s <= nodes; s++ {
		ps := e.sizes[s]
		w := math.Min(1, math.Max(0, p.PA*float64(s)+p.PB))
		F := w*F1 + (1-w)*F2
		e.runBySize[s] = (w*I1 + (1-w)*I2) / F
		e.run2BySize[s] = (w*J1 + (1-w)*J2) / F
		e.meanRun += ps * e.runBySize[s]
		m2Run += ps * e.run2BySize[s]
		e.meanSize += ps * float64(s)
		m2Size += ps * float64(s) * float64(s)
		if s > 1 {
			par += ps
			if s&(s-1) == 0 {
				pow2 += ps
			}
		}
	}
	e.serial = e.sizes[1]
	e.pow2OfParallel = pow2 / par
	e.varSize = m2Size - e.meanSize*e.meanSize
	e.varRun = m2Run - e.meanRun*e.meanRun
	F, I, J := expMoments(p.AArr*p.ARAR, p.BArr, MaxLogInterarrival)
	e.meanInter = I / F
	e.varInter = J/F - e.meanInter*e.meanInter
	return e
}

// runMoments returns E[runtime] and E[runtime²] over the sizes in [lo, hi].
func (e expected) runMoments(lo, hi int) (mean, second float64) {
	var mass float64
	for s := lo; s <= hi && s < len(e.sizes); s++ {
		mass += e.sizes[s]
		mean += e.sizes[s] * e.runBySize[s]
		second += e.sizes[s] * e.run2BySize[s]
	}
	return mean / mass, second / mass
}
