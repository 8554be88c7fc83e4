package lublin

import (
	"math"
	"math/rand/v2"
	"testing"
)

// relErr is |got-want| / |want| (absolute near 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// The platform-independent functions must agree with the standard library
// to a few units in the last place (2^-52 ≈ 2.2e-16).
func TestExpLogAgreeWithMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const tol = 5e-16 // about 2 ulp
	worstExp, worstLog := 0.0, 0.0
	for range 200000 {
		x := (r.Float64()*2 - 1) * 700
		if e := relErr(exp(x), math.Exp(x)); e > worstExp {
			worstExp = e
		}
		y := math.Exp((r.Float64()*2 - 1) * 700)
		if e := relErr(log(y), math.Log(y)); e > worstLog && math.Abs(math.Log(y)) > 1e-3 {
			worstLog = e
		}
		// Small arguments, where most of the model's values lie.
		z := (r.Float64()*2 - 1) * 15
		if e := relErr(exp(z), math.Exp(z)); e > worstExp {
			worstExp = e
		}
		u := r.Float64() + 0x1p-60
		if e := relErr(log(u), math.Log(u)); e > worstLog && math.Abs(math.Log(u)) > 1e-3 {
			worstLog = e
		}
	}
	if worstExp > tol || worstLog > tol {
		t.Errorf("worst relative error: exp %.3g, log %.3g; want <= %g", worstExp, worstLog, tol)
	}
	// log near 1, where the relative error is measured against a small value.
	for _, x := range []float64{1 - 1e-9, 1 + 1e-9, 1 + 1e-15, 0.999, 1.001} {
		if e := math.Abs(log(x) - math.Log(x)); e > 1e-24+4e-16*math.Abs(math.Log(x)) {
			t.Errorf("log(%v) = %v, math.Log = %v", x, log(x), math.Log(x))
		}
	}
}

func TestExpLogSpecialValues(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name      string
		got, want float64
	}{
		{"exp(0)", exp(0), 1},
		{"exp(-inf)", exp(-inf), 0},
		{"exp(inf)", exp(inf), inf},
		{"exp(710)", exp(710), inf},
		{"exp(-746)", exp(-746), 0},
		{"log(1)", log(1), 0},
		{"log(0)", log(0), math.Inf(-1)},
		{"log(inf)", log(inf), inf},
		{"log2(128)", log2(128), 7},
		{"log2(1)", log2(1), 0},
		{"log2(1<<40)", log2(1 << 40), 40},
		{"exp2(0)", exp2(0), 1},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !math.IsNaN(exp(math.NaN())) || !math.IsNaN(log(math.NaN())) || !math.IsNaN(log(-1)) {
		t.Error("NaN handling")
	}
	// Subnormal results and arguments.
	if e := relErr(exp(-740), math.Exp(-740)); e > 1e-10 {
		t.Errorf("exp(-740) = %v, math.Exp = %v", exp(-740), math.Exp(-740))
	}
	// ln(2^-1074), the smallest subnormal. (math.Log's amd64 assembly
	// returns ln(2^-1022) here, one more reason not to use it.)
	if got, want := log(0x1p-1074), -1074*math.Ln2; relErr(got, want) > 4e-16 {
		t.Errorf("log(2^-1074) = %v, want %v", got, want)
	}
	if e := relErr(exp(1), math.E); e > 5e-16 {
		t.Errorf("exp(1) = %v, want %v", exp(1), math.E)
	}
	if e := relErr(exp2(7), 128); e > 4e-16 {
		t.Errorf("exp2(7) = %v", exp2(7))
	}
}

func TestLgammaAgreesWithMath(t *testing.T) {
	for x := 0.05; x < 700; x *= 1.07 {
		want, _ := math.Lgamma(x)
		got := lgamma(x)
		if math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("lgamma(%v) = %v, math.Lgamma = %v", x, got, want)
		}
	}
}

// simpsonGammaCDF integrates the gamma(a, b) density over [0, x] with
// Simpson's rule, using only the standard library: an independent check of
// gammaCDF. For a <= 1 the density is unbounded (or not 0) at 0, so there the
// substitution t = y^a (y^(a-1) dy = dt/a) gives the smooth integrand
// e^(-t^(1/a)) on [0, (x/b)^a].
func simpsonGammaCDF(x, a, b float64) float64 {
	lg, _ := math.Lgamma(a)
	f := func(y float64) float64 { // density of gamma(a, 1)
		if y <= 0 {
			return 0
		}
		return math.Exp((a-1)*math.Log(y) - y - lg)
	}
	top := x / b
	if a <= 1 {
		f = func(t float64) float64 { return math.Exp(-math.Pow(t, 1/a)-lg) / a }
		top = math.Pow(x/b, a)
	}
	return simpson(f, 0, top, 20000)
}

// simpson integrates f over [lo, hi] with n (even) intervals.
func simpson(f func(float64) float64, lo, hi float64, n int) float64 {
	h := (hi - lo) / float64(n)
	sum := 0.0
	for i := 0; i <= n; i++ {
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

func TestGammaCDFAgainstIntegration(t *testing.T) {
	for _, c := range []struct{ a, b float64 }{
		{0.3, 2}, {1, 1}, {2.5, 0.7}, {BatchANum, BatchBNum}, {InterANum, InterBNum},
		{TypelessANum, TypelessBNum}, {BatchAArr * BatchARAR, BatchBArr}, {BatchA2, BatchB2},
	} {
		mean := c.a * c.b
		sd := math.Sqrt(c.a) * c.b
		for _, z := range []float64{-2, -1, -0.5, 0, 0.5, 1, 2, 4} {
			x := mean + z*sd
			if x <= 0 {
				continue
			}
			got, want := gammaCDF(x, c.a, c.b), simpsonGammaCDF(x, c.a, c.b)
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("gammaCDF(%v; %v, %v) = %.12f, integration gives %.12f", x, c.a, c.b, got, want)
			}
		}
	}
	if gammaCDF(0, 2, 1) != 0 || gammaCDF(-1, 2, 1) != 0 {
		t.Error("gammaCDF below 0 must be 0")
	}
	// Exponential distribution: 1 - e^-x.
	for _, x := range []float64{0.1, 1, 5, 30} {
		if got := gammaCDF(x, 1, 1); math.Abs(got-(1-math.Exp(-x))) > 1e-14 {
			t.Errorf("gammaCDF(%v; 1, 1) = %v, want %v", x, got, 1-math.Exp(-x))
		}
	}
}
