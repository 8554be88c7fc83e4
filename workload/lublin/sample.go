package lublin

import (
	"math"
	"math/rand/v2"
)

// sampler draws the model's random variates from one PCG stream. It uses
// only the generator's raw 64-bit output and the platform-independent
// functions of fmath.go, so a seed gives the same variates everywhere.
type sampler struct {
	src      *rand.PCG
	spare    float64 // the polar method's second normal variate
	hasSpare bool
}

// pcgStream is the PCG's second seed word, fixed ("lublin99" in ASCII), so
// that Model.Seed alone selects the stream.
const pcgStream = 0x6c75626c696e3939

func newSampler(seed uint64) *sampler {
	return &sampler{src: rand.NewPCG(seed, pcgStream)}
}

// uniform returns a uniform variate in the open interval (0, 1): one of the
// 2^53 midpoints (k + 1/2) / 2^53, never 0, so that its logarithm is finite.
func (s *sampler) uniform() float64 {
	return (float64(s.src.Uint64()>>11) + 0.5) * 0x1p-53
}

// normal returns a standard normal variate by Marsaglia's polar method,
// which yields two independent variates per accepted pair; the second is
// kept for the next call.
func (s *sampler) normal() float64 {
	if s.hasSpare {
		s.hasSpare = false
		return s.spare
	}
	for {
		u := float64(2*s.uniform()) - 1
		v := float64(2*s.uniform()) - 1
		q := float64(u*u) + float64(v*v)
		if q >= 1 {
			continue
		}
		f := math.Sqrt(-2 * log(q) / q)
		s.spare, s.hasSpare = float64(v*f), true
		return float64(u * f)
	}
}

// gamma returns a gamma(shape, scale) variate (mean shape×scale, variance
// shape×scale²) by Marsaglia and Tsang's method ("A simple method for
// generating gamma variables", ACM TOMS 26(3), 2000). For shape < 1 it draws
// gamma(shape+1) and multiplies by U^(1/shape), the boost of the same paper.
// shape and scale must be positive.
func (s *sampler) gamma(shape, scale float64) float64 {
	if shape < 1 {
		boost := exp(log(s.uniform()) / shape)
		return float64(s.gamma(shape+1, scale) * boost)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = s.normal()
			v = 1 + float64(c*x)
			if v > 0 {
				break
			}
		}
		v = float64(v * v * v)
		u := s.uniform()
		x2 := float64(x * x)
		// The squeeze accepts about 98% of draws without a logarithm.
		if u < 1-float64(0.0331*x2*x2) {
			return float64(float64(d*v) * scale)
		}
		if log(u) < float64(0.5*x2)+float64(d*(1-v+log(v))) {
			return float64(float64(d*v) * scale)
		}
	}
}

// hyperGamma returns a variate of the mixture of gamma(a1, b1), with
// weight p, and gamma(a2, b2) [m_lublin99.c hyper_gamma]: one uniform
// chooses the component, then the component is drawn.
func (s *sampler) hyperGamma(a1, b1, a2, b2, p float64) float64 {
	if s.uniform() <= p {
		return s.gamma(a1, b1)
	}
	return s.gamma(a2, b2)
}

// twoStageUniform returns a variate uniform on [low, med] with probability
// prob, else uniform on [med, high] [m_lublin99.c two_stage_uniform].
func (s *sampler) twoStageUniform(low, med, high, prob float64) float64 {
	a, b := med, high
	if s.uniform() <= prob {
		a, b = low, med
	}
	return float64(s.uniform()*(b-a)) + a
}
