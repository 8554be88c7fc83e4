package lublin

import "math"

// Elementary functions with the same result on every platform.
//
// Go's math.Exp and math.Log are assembly on some architectures (amd64,
// arm64, s390x, loong64) and pure Go elsewhere, and the two are not promised
// to agree to the last bit. The Go specification also lets the compiler fuse
// x*y+z into one FMA instruction (arm64, ppc64, s390x, riscv64, and amd64
// with GOAMD64=v3), which changes the rounding. Either difference is tiny, but
// it could flip a rejection test or a rounding to an integer somewhere in a
// long workload, and the generator promises the same jobs everywhere. So the
// functions below use only +, -, *, / and math.Sqrt (all correctly rounded by
// IEEE 754) and bit manipulation (math.Frexp, math.Ldexp), and every product
// that feeds an addition is wrapped in an explicit float64 conversion, which
// the specification defines as a rounding point that prevents fusion. They
// are accurate to a few units in the last place, which is far more than the
// model needs.

const (
	// ln2Hi + ln2Lo = ln 2; ln2Hi has only 32 significant bits, so k*ln2Hi is
	// exact for |k| < 2^20 (Cody and Waite's argument reduction).
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
	ln2   = 0.693147180559945309417232121458176568
)

// expTaylor holds 1/k! for k = 0..17: the Taylor series of e^r, enough for
// |r| <= ln2/2 to below 1e-19 relative.
var expTaylor = func() [18]float64 {
	var c [18]float64
	f := 1.0
	for k := range c {
		if k > 0 {
			f *= float64(k)
		}
		c[k] = 1 / f
	}
	return c
}()

// exp returns e^x.
func exp(x float64) float64 {
	switch {
	case x != x: // NaN
		return x
	case x > 709.782712893384:
		return math.Inf(1)
	case x < -745.1332191019412:
		return 0
	}
	// x = k ln2 + r, |r| <= ln2/2.
	k := math.Floor(float64(x/ln2) + 0.5)
	r := float64(x-float64(k*ln2Hi)) - float64(k*ln2Lo)
	// Horner: sum of r^j / j!.
	p := expTaylor[len(expTaylor)-1]
	for j := len(expTaylor) - 2; j >= 0; j-- {
		p = float64(p*r) + expTaylor[j]
	}
	return math.Ldexp(p, int(k))
}

// log returns the natural logarithm of x.
func log(x float64) float64 {
	switch {
	case x != x || x == math.Inf(1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// x = m 2^e with m in [sqrt(1/2), sqrt(2)).
	m, e := math.Frexp(x) // m in [1/2, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	// ln m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716:
	// 2 (s + s^3/3 + s^5/5 + ...); 13 terms reach below 1e-19.
	s := (m - 1) / (m + 1)
	s2 := float64(s * s)
	q := 1.0 / 25
	for j := 23; j >= 1; j -= 2 {
		q = float64(q*s2) + 1/float64(j)
	}
	fe := float64(e)
	lnm := float64(2 * s * q)
	return float64(fe*ln2Hi) + (lnm + float64(fe*ln2Lo))
}

// log2 returns the base-2 logarithm of x, exact for powers of two.
func log2(x float64) float64 {
	m, e := math.Frexp(x)
	if m == 0.5 {
		return float64(e - 1)
	}
	return log(x) / ln2
}

// exp2 returns 2^x.
func exp2(x float64) float64 {
	return exp(float64(x * ln2))
}

// lgamma returns ln Γ(x) for x > 0: the recurrence Γ(x+1) = x Γ(x) moves x
// to at least 10, then Stirling's series
//
//	ln Γ(x) = (x - 1/2) ln x - x + ln(2π)/2 + Σ B_2k / (2k (2k-1) x^(2k-1))
//
// whose terms after x^-11 are below 1e-15 there.
func lgamma(x float64) float64 {
	shift := 0.0
	prod := 1.0
	for x < 10 {
		prod = float64(prod * x)
		x++
	}
	if prod != 1 {
		shift = log(prod)
	}
	const halfLn2Pi = 0.918938533204672741780329736406
	// Bernoulli terms B_2k / (2k (2k-1)) for k = 1..6.
	stirling := [...]float64{1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188, -691.0 / 360360}
	inv := 1 / x
	inv2 := float64(inv * inv)
	s := stirling[len(stirling)-1]
	for j := len(stirling) - 2; j >= 0; j-- {
		s = float64(s*inv2) + stirling[j]
	}
	s = float64(s * inv)
	return float64((x-0.5)*log(x)) - x + halfLn2Pi + s - shift
}

// gammaCDF returns P(X <= x) for X ~ gamma(shape a, scale b): the
// regularized lower incomplete gamma function P(a, x/b), by its power series
// below a+1 and by the continued fraction of its complement above (Press,
// Flannery, Teukolsky, Vetterling, "Numerical Recipes", ch. 6, the same
// method as m_lublin99.c's gamcdf/gser/gcf).
func gammaCDF(x, a, b float64) float64 {
	if x <= 0 {
		return 0
	}
	x /= b
	lead := exp(float64(a*log(x)) - x - lgamma(a))
	const eps = 1e-16
	if x < a+1 {
		// P = lead * Σ_{n>=0} x^n / (a (a+1) ... (a+n))
		term := 1 / a
		sum := term
		for n := 1; n < 10000; n++ {
			term = float64(term * (x / (a + float64(n))))
			sum += term
			if term < sum*eps {
				break
			}
		}
		return math.Min(1, float64(sum*lead))
	}
	// Q = lead / (x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))), by the
	// modified Lentz method.
	const tiny = 1e-300
	bn := x + 1 - a
	c := 1 / tiny
	d := 1 / bn
	h := d
	for n := 1; n < 10000; n++ {
		an := float64(-float64(n) * (float64(n) - a))
		bn += 2
		d = float64(an*d) + bn
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = bn + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := float64(d * c)
		h = float64(h * del)
		if math.Abs(del-1) < eps {
			break
		}
	}
	return math.Max(0, 1-float64(lead*h))
}
