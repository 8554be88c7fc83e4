package lublin

import (
	"math"
	"testing"
)

// Statistical tests here and in lublin_test.go use a fixed seed, so they
// are deterministic; their tolerances are 5 standard errors of the
// statistic, computed from the distribution's own moments, so that a
// correct sampler passes for any seed with probability about 1 − 6e-7
// (normal approximation) while a wrong mean or variance by a few standard
// errors fails.

const nSample = 200000

// moments returns the sample mean and the unbiased sample variance.
func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// checkMoments compares the sample mean and variance of xs with the
// distribution's mean mu, variance v and fourth central moment mu4: the
// sample mean has standard error sqrt(v/n), the sample variance
// sqrt((mu4 − v²)/n).
func checkMoments(t *testing.T, name string, xs []float64, mu, v, mu4 float64) {
	t.Helper()
	n := float64(len(xs))
	mean, variance := moments(xs)
	if se := math.Sqrt(v / n); math.Abs(mean-mu) > 5*se {
		t.Errorf("%s: mean %.6g, want %.6g ± %.3g (5 se)", name, mean, mu, 5*se)
	}
	if se := math.Sqrt((mu4 - v*v) / n); math.Abs(variance-v) > 5*se {
		t.Errorf("%s: variance %.6g, want %.6g ± %.3g (5 se)", name, variance, v, 5*se)
	}
}

func draw(n int, f func() float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = f()
	}
	return xs
}

func TestUniform(t *testing.T) {
	s := newSampler(1)
	xs := draw(nSample, func() float64 {
		u := s.uniform()
		if !(u > 0 && u < 1) {
			t.Fatalf("uniform() = %v, want in (0, 1)", u)
		}
		return u
	})
	// U(0,1): mean 1/2, variance 1/12, fourth central moment 1/80.
	checkMoments(t, "uniform", xs, 0.5, 1.0/12, 1.0/80)
}

func TestNormal(t *testing.T) {
	s := newSampler(2)
	xs := draw(nSample, s.normal)
	// N(0,1): variance 1, fourth central moment 3.
	checkMoments(t, "normal", xs, 0, 1, 3)
	// Fraction beyond 1.96: 5% (binomial standard error).
	out := 0
	for _, x := range xs {
		if math.Abs(x) > 1.959963984540054 {
			out++
		}
	}
	p := float64(out) / nSample
	if se := math.Sqrt(0.05 * 0.95 / nSample); math.Abs(p-0.05) > 5*se {
		t.Errorf("P(|Z| > 1.96) = %.5f, want 0.05 ± %.5f", p, 5*se)
	}
}

// TestGammaMoments checks gamma(a, b) draws against mean a·b, variance a·b²
// and fourth central moment 3a(a+2)·b⁴, for shapes below 1 (the boost
// path), at 1, and for every shape the model uses.
func TestGammaMoments(t *testing.T) {
	cases := []struct{ a, b float64 }{
		{0.1, 3}, {0.5, 1}, {0.9, 2}, {1, 1}, {1.5, 0.5},
		{BatchA1, BatchB1}, {BatchA2, BatchB2}, {BatchAArr * BatchARAR, BatchBArr},
		{InterA1, InterB1}, {InterA2, InterB2}, {InterAArr * InterARAR, InterBArr},
		{TypelessA1, TypelessB1}, {TypelessA2, TypelessB2}, {TypelessAArr * TypelessARAR, TypelessBArr},
	}
	for i, c := range cases {
		s := newSampler(uint64(100 + i))
		xs := draw(nSample, func() float64 {
			x := s.gamma(c.a, c.b)
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("gamma(%v, %v) = %v", c.a, c.b, x)
			}
			return x
		})
		b2 := c.b * c.b
		checkMoments(t, "gamma", xs, c.a*c.b, c.a*b2, 3*c.a*(c.a+2)*b2*b2)
		// The empirical CDF at the quartiles of the distribution (found
		// by bisection on gammaCDF, itself checked against integration)
		// must be 1/4, 1/2, 3/4 within 5 binomial standard errors.
		for _, q := range []float64{0.25, 0.5, 0.75} {
			x := gammaQuantile(q, c.a, c.b)
			below := 0
			for _, v := range xs {
				if v <= x {
					below++
				}
			}
			p := float64(below) / nSample
			if se := math.Sqrt(q * (1 - q) / nSample); math.Abs(p-q) > 5*se {
				t.Errorf("gamma(%v, %v): P(X <= %.4g) = %.5f, want %v ± %.5f", c.a, c.b, x, p, q, 5*se)
			}
		}
	}
}

// gammaQuantile inverts gammaCDF by bisection.
func gammaQuantile(q, a, b float64) float64 {
	lo, hi := 0.0, a*b
	for gammaCDF(hi, a, b) < q {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if gammaCDF(mid, a, b) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestHyperGammaMoments: a mixture with weight p of gamma(a1, b1) and
// gamma(a2, b2) has mean m = p·a1·b1 + (1−p)·a2·b2 and second moment
// p·(a1·b1² + (a1·b1)²) + (1−p)·(a2·b2² + (a2·b2)²). (m_lublin99.c's comment
// gives p²·a1·b1² + (1−p)²·a2·b2² as the variance; that is the variance of
// a weighted sum, not of a mixture.)
func TestHyperGammaMoments(t *testing.T) {
	for i, p := range []float64{0, 0.3146, 0.6956, 1} {
		a1, b1, a2, b2 := BatchA1, BatchB1, BatchA2, BatchB2
		s := newSampler(uint64(200 + i))
		xs := draw(nSample, func() float64 { return s.hyperGamma(a1, b1, a2, b2, p) })
		raw := func(k int, a, b float64) float64 { // E[X^k] of gamma(a, b)
			r := 1.0
			for j := range k {
				r *= (a + float64(j)) * b
			}
			return r
		}
		m := [5]float64{}
		for k := 1; k <= 4; k++ {
			m[k] = p*raw(k, a1, b1) + (1-p)*raw(k, a2, b2)
		}
		mu := m[1]
		v := m[2] - mu*mu
		mu4 := m[4] - 4*mu*m[3] + 6*mu*mu*m[2] - 3*mu*mu*mu*mu
		checkMoments(t, "hyper-gamma", xs, mu, v, mu4)
	}
}

// TestTwoStageUniform: uniform on [lo, med] with probability p, else on
// [med, hi]: P(X < med) = p, mean (p·(lo+med) + (1−p)·(med+hi))/2, second
// moment p·(lo²+lo·med+med²)/3 + (1−p)·(med²+med·hi+hi²)/3.
func TestTwoStageUniform(t *testing.T) {
	lo, med, hi, p := BatchULow, BatchUMed, BatchUHi, BatchUProb
	s := newSampler(3)
	below := 0
	xs := draw(nSample, func() float64 {
		x := s.twoStageUniform(lo, med, hi, p)
		if x < lo || x > hi {
			t.Fatalf("twoStageUniform = %v, want in [%v, %v]", x, lo, hi)
		}
		if x < med {
			below++
		}
		return x
	})
	if f, se := float64(below)/nSample, math.Sqrt(p*(1-p)/nSample); math.Abs(f-p) > 5*se {
		t.Errorf("P(X < UMed) = %.5f, want %v ± %.5f", f, p, 5*se)
	}
	// Moments of a mixture of two uniforms.
	raw := func(k int, a, b float64) float64 { // E[X^k], X ~ U(a, b)
		return (math.Pow(b, float64(k+1)) - math.Pow(a, float64(k+1))) / (float64(k+1) * (b - a))
	}
	var m [5]float64
	for k := 1; k <= 4; k++ {
		m[k] = p*raw(k, lo, med) + (1-p)*raw(k, med, hi)
	}
	mu := m[1]
	if want := (p*(lo+med) + (1-p)*(med+hi)) / 2; math.Abs(mu-want) > 1e-12 {
		t.Fatalf("mean formula %v vs %v", mu, want)
	}
	checkMoments(t, "two-stage uniform", xs, mu, m[2]-mu*mu, m[4]-4*mu*m[3]+6*mu*mu*m[2]-3*mu*mu*mu*mu)
}
