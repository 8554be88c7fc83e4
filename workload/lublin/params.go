package lublin

import (
	"fmt"
	"math"
)

// The model's parameter values. Source: the authors' reference
// implementation m_lublin99.c (Parallel Workloads Archive, "Models" page,
// Lublin99), whose names are given in brackets, cross-checked against two
// ports (GridSim 5.0's WorkloadLublin99.java, and the Python package
// parallelworkloads, whose module lublin99 compiles m_lublin99.c itself):
// all agree on every value to the digits given. The paper (Lublin and
// Feitelson, JPDC 63(11), 2003) is where the values were fitted; its text
// was not available while this package was written, so they have not been
// checked against its tables (docs/lublin.md).
//
// The size parameters ULow/UMed/UHi are log2 of a job size and are given by
// the C code for a 128-node machine; BatchParams, InteractiveParams and
// TypelessParams rescale them to the machine (see there). Runtime and
// inter-arrival parameters describe the natural logarithm of a time in
// seconds: ln(runtime) follows a hyper-gamma distribution and ln(inter-arrival
// time at rush hour) a gamma distribution. Gamma distributions are written
// gamma(shape, scale), with mean shape×scale.

// ReferenceNodes is the machine size the C code's size parameters are given
// for: 2^UHI with UHI = 7 [UHI, UHI_BATCH].
const ReferenceNodes = 128

// Batch jobs [*_BATCH].
const (
	BatchSerialProb = 0.2927 // probability that a job is serial (1 node) [SERIAL_PROB_BATCH]
	BatchPow2Prob   = 0.6686 // probability, of all jobs, that a job is parallel with a power-of-two size [POW2_PROB_BATCH]
	BatchULow       = 1.2    // lowest log2(size) of a parallel job [ULOW_BATCH]
	BatchUMed       = 5.0    // log2(size) where the two-stage uniform changes density, at 128 nodes [UMED_BATCH]
	BatchUHi        = 7.0    // highest log2(size): log2 of the machine size, at 128 nodes [UHI_BATCH]
	BatchUProb      = 0.875  // probability of the first stage [ULow, UMed] [UPROB_BATCH]
	BatchA1         = 6.57   // shape of the first gamma of ln(runtime) (short jobs) [A1_BATCH]
	BatchB1         = 0.823  // scale of the first gamma of ln(runtime) [B1_BATCH]
	BatchA2         = 639.1  // shape of the second gamma of ln(runtime) (long jobs) [A2_BATCH]
	BatchB2         = 0.0156 // scale of the second gamma of ln(runtime) [B2_BATCH]
	BatchPA         = -0.003 // slope of the first gamma's weight in the job size: p = PA×size + PB [PA_BATCH]
	BatchPB         = 0.6986 // intercept of the first gamma's weight [PB_BATCH]
	BatchAArr       = 6.0415 // shape of the gamma of ln(inter-arrival seconds) at rush hours [AARR_BATCH]
	BatchBArr       = 0.8531 // scale of the gamma of ln(inter-arrival seconds) [BARR_BATCH]
	BatchARAR       = 1.0519 // arrive-rush-all ratio: the shape used is AArr×ARAR [ARAR_BATCH]
	BatchANum       = 6.1271 // shape of the gamma giving the arrival rate over the day's half-hour buckets [ANUM_BATCH]
	BatchBNum       = 5.2740 // scale of that gamma, in buckets [BNUM_BATCH]
)

// Interactive jobs [*_ACTIVE]. Meanings as for the batch constants.
const (
	InterSerialProb = 0.1541  // probability of a serial job [SERIAL_PROB_ACTIVE]
	InterPow2Prob   = 0.625   // probability, of all jobs, of a power-of-two parallel job [POW2_PROB_ACTIVE]
	InterULow       = 1.0     // lowest log2(size) of a parallel job [ULOW_ACTIVE]
	InterUMed       = 3.0     // change point of the two-stage uniform, at 128 nodes [UMED_ACTIVE]
	InterUHi        = 5.5     // highest log2(size) at 128 nodes: at most 2^5.5 ≈ 45 nodes [UHI_ACTIVE]
	InterUProb      = 0.705   // probability of the first stage [UPROB_ACTIVE]
	InterA1         = 3.8351  // shape of the first gamma of ln(runtime) [A1_ACTIVE]
	InterB1         = 0.6605  // scale of the first gamma of ln(runtime) [B1_ACTIVE]
	InterA2         = 7.073   // shape of the second gamma of ln(runtime) [A2_ACTIVE]
	InterB2         = 0.6856  // scale of the second gamma of ln(runtime) [B2_ACTIVE]
	InterPA         = -0.0118 // slope of the first gamma's weight in the size [PA_ACTIVE]
	InterPB         = 0.9156  // intercept of the first gamma's weight [PB_ACTIVE]
	InterAArr       = 6.5510  // shape of the gamma of ln(inter-arrival) at rush hours [AARR_ACTIVE]
	InterBArr       = 0.6621  // scale of the gamma of ln(inter-arrival) [BARR_ACTIVE]
	InterARAR       = 0.9797  // arrive-rush-all ratio [ARAR_ACTIVE]
	InterANum       = 8.9186  // shape of the daily-cycle gamma [ANUM_ACTIVE]
	InterBNum       = 3.6680  // scale of the daily-cycle gamma, in buckets [BNUM_ACTIVE]
)

// Typeless ("whole sample") parameters, fitted to all jobs without telling
// batch from interactive; the C code uses them when INCLUDE_JOBS_TYPE is 0
// (and then labels every job interactive). Meanings as for the batch
// constants.
const (
	TypelessSerialProb = 0.244   // probability of a serial job [SERIAL_PROB]
	TypelessPow2Prob   = 0.576   // probability, of all jobs, of a power-of-two parallel job [POW2_PROB]
	TypelessULow       = 0.8     // lowest log2(size) of a parallel job [ULOW]
	TypelessUMed       = 4.5     // change point of the two-stage uniform, at 128 nodes [UMED]
	TypelessUHi        = 7.0     // highest log2(size), at 128 nodes [UHI]
	TypelessUProb      = 0.86    // probability of the first stage [UPROB]
	TypelessA1         = 4.2     // shape of the first gamma of ln(runtime) [A1]
	TypelessB1         = 0.94    // scale of the first gamma of ln(runtime) [B1]
	TypelessA2         = 312.0   // shape of the second gamma of ln(runtime) [A2]
	TypelessB2         = 0.03    // scale of the second gamma of ln(runtime) [B2]
	TypelessPA         = -0.0054 // slope of the first gamma's weight in the size [PA]
	TypelessPB         = 0.78    // intercept of the first gamma's weight [PB]
	TypelessAArr       = 10.2303 // shape of the gamma of ln(inter-arrival) at rush hours [AARR]
	TypelessBArr       = 0.4871  // scale of the gamma of ln(inter-arrival) [BARR]
	TypelessARAR       = 1.0225  // arrive-rush-all ratio [ARAR]
	TypelessANum       = 8.1737  // shape of the daily-cycle gamma [ANUM]
	TypelessBNum       = 3.9631  // scale of the daily-cycle gamma, in buckets [BNUM]
)

// Structural constants of the generator.
const (
	// MaxLogRuntime caps ln(runtime): a runtime draw above it is redrawn, so
	// no job runs longer than e^12 ≈ 162,754 s (45 h) [TOO_MUCH_TIME].
	MaxLogRuntime = 12
	// MaxLogInterarrival caps ln(inter-arrival points) likewise: e^13 ≈
	// 442,413 s, about 5 days [TOO_MUCH_ARRIVE_TIME].
	MaxLogInterarrival = 13
	// BucketsPerDay is the resolution of the daily cycle: 48 half hours
	// [BUCKETS].
	BucketsPerDay = 48
	// BucketSeconds is the length of one bucket [SECONDS_IN_BUCKET].
	BucketSeconds = 86400 / BucketsPerDay
	// CyclicDayStart is where the daily-cycle gamma starts: bucket weights
	// are read off the gamma(ANum, BNum) density at 11, 12, ..., 58
	// (in buckets), and 11 maps to the bucket 10 (05:00–05:30), the quietest
	// time of day [CYCLIC_DAY_START; the C comment says hours, the code
	// uses it as a bucket number, and so do we].
	CyclicDayStart = 11
)

// Params is the parameter set of one job type, that is of one arrival
// stream. Sizes are log2 of a node count; times are natural logarithms of
// seconds. See the constants for each field's value and source.
type Params struct {
	// SerialProb is the probability that a job is serial (size 1).
	SerialProb float64
	// Pow2Prob is the probability, of all jobs (not of parallel jobs), that
	// a job is parallel with a size rounded to a power of two; the rest,
	// 1 − SerialProb − Pow2Prob, are parallel with any size.
	Pow2Prob float64
	// ULow, UMed and UHi bound the two-stage uniform distribution of
	// log2(size) of a parallel job: uniform on [ULow, UMed] with
	// probability UProb, else uniform on [UMed, UHi].
	ULow, UMed, UHi, UProb float64
	// A1, B1 and A2, B2 are the shape and scale of the two gamma
	// distributions of ln(runtime in seconds); the first (short jobs) is
	// drawn with probability p = PA×size + PB, clamped to [0, 1].
	A1, B1, A2, B2, PA, PB float64
	// AArr and BArr are the shape and scale of the gamma distribution of
	// ln(inter-arrival time in seconds) at rush hours; the shape used is
	// AArr×ARAR (ARAR turns the rush-hour fit into an all-day one).
	AArr, BArr, ARAR float64
	// ANum and BNum are the shape and scale (in half-hour buckets) of the
	// gamma distribution whose density gives the relative arrival rate
	// over the day (see CyclicDayStart).
	ANum, BNum float64
}

// sizeBounds rescales the C code's 128-node size bounds to a machine of
// nodes nodes: UHi becomes log2(nodes) − (7 − uhi) (the largest job keeps
// its ratio to the machine size), UMed keeps its distance below UHi, and
// for small machines ULow ≤ UMed ≤ UHi is restored by lowering ULow and
// UMed to UHi. At 128 nodes this returns the C code's values unchanged.
func sizeBounds(nodes int, ulow, umed, uhi float64) (lo, med, hi float64) {
	top := log2(float64(max(nodes, 1)))
	hi = top - (log2(ReferenceNodes) - uhi)
	// Keep at least log2(min(2, nodes)) so that parallel jobs stay possible.
	hi = math.Max(hi, math.Min(ulow, top))
	lo = math.Min(ulow, hi)
	med = math.Min(math.Max(hi-(uhi-umed), lo), hi)
	return lo, med, hi
}

// BatchParams returns the batch-job parameters for a machine of nodes
// nodes: UHi = log2(nodes), UMed = UHi − 2.
func BatchParams(nodes int) Params {
	lo, med, hi := sizeBounds(nodes, BatchULow, BatchUMed, BatchUHi)
	return Params{
		SerialProb: BatchSerialProb, Pow2Prob: BatchPow2Prob,
		ULow: lo, UMed: med, UHi: hi, UProb: BatchUProb,
		A1: BatchA1, B1: BatchB1, A2: BatchA2, B2: BatchB2, PA: BatchPA, PB: BatchPB,
		AArr: BatchAArr, BArr: BatchBArr, ARAR: BatchARAR, ANum: BatchANum, BNum: BatchBNum,
	}
}

// InteractiveParams returns the interactive-job parameters for a machine of
// nodes nodes: UHi = log2(nodes) − 1.5 (45 of 128 nodes), UMed = UHi − 2.5.
func InteractiveParams(nodes int) Params {
	lo, med, hi := sizeBounds(nodes, InterULow, InterUMed, InterUHi)
	return Params{
		SerialProb: InterSerialProb, Pow2Prob: InterPow2Prob,
		ULow: lo, UMed: med, UHi: hi, UProb: InterUProb,
		A1: InterA1, B1: InterB1, A2: InterA2, B2: InterB2, PA: InterPA, PB: InterPB,
		AArr: InterAArr, BArr: InterBArr, ARAR: InterARAR, ANum: InterANum, BNum: InterBNum,
	}
}

// TypelessParams returns the whole-sample parameters for a machine of nodes
// nodes: UHi = log2(nodes), UMed = UHi − 2.5. Set Model.Batch to them to
// generate what the C code generates with INCLUDE_JOBS_TYPE 0 (as the
// Parallel Workloads Archive's sample output was).
func TypelessParams(nodes int) Params {
	lo, med, hi := sizeBounds(nodes, TypelessULow, TypelessUMed, TypelessUHi)
	return Params{
		SerialProb: TypelessSerialProb, Pow2Prob: TypelessPow2Prob,
		ULow: lo, UMed: med, UHi: hi, UProb: TypelessUProb,
		A1: TypelessA1, B1: TypelessB1, A2: TypelessA2, B2: TypelessB2, PA: TypelessPA, PB: TypelessPB,
		AArr: TypelessAArr, BArr: TypelessBArr, ARAR: TypelessARAR, ANum: TypelessANum, BNum: TypelessBNum,
	}
}

// Validate reports the first parameter out of its domain, naming it.
func (p Params) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	prob := func(name string, v float64) error {
		if !finite(v) || v < 0 || v > 1 {
			return fmt.Errorf("%s = %v: want a probability in [0, 1]", name, v)
		}
		return nil
	}
	pos := func(name string, v float64) error {
		if !finite(v) || v <= 0 {
			return fmt.Errorf("%s = %v: want a positive number", name, v)
		}
		return nil
	}
	for _, err := range []error{
		prob("SerialProb", p.SerialProb), prob("Pow2Prob", p.Pow2Prob), prob("UProb", p.UProb),
		pos("A1", p.A1), pos("B1", p.B1), pos("A2", p.A2), pos("B2", p.B2),
		pos("AArr", p.AArr), pos("BArr", p.BArr), pos("ARAR", p.ARAR),
		pos("ANum", p.ANum), pos("BNum", p.BNum),
	} {
		if err != nil {
			return err
		}
	}
	if p.SerialProb+p.Pow2Prob > 1 {
		return fmt.Errorf("SerialProb + Pow2Prob = %v: want at most 1", p.SerialProb+p.Pow2Prob)
	}
	if !finite(p.PA) || !finite(p.PB) {
		return fmt.Errorf("PA, PB = %v, %v: want finite numbers", p.PA, p.PB)
	}
	if !finite(p.ULow) || !finite(p.UMed) || !finite(p.UHi) || !(0 <= p.ULow && p.ULow <= p.UMed && p.UMed <= p.UHi) {
		return fmt.Errorf("ULow, UMed, UHi = %v, %v, %v: want 0 <= ULow <= UMed <= UHi", p.ULow, p.UMed, p.UHi)
	}
	return nil
}

// dayWeights returns the relative arrival rate of each half-hour bucket of
// the day, with mean 1, as m_lublin99.c's arrive_init computes it: bucket
// (i−1) mod 48 gets the gamma(ANum, BNum) probability of [i−0.5, i+0.5] for
// i = CyclicDayStart .. CyclicDayStart+47.
func dayWeights(p Params) ([BucketsPerDay]float64, error) {
	var w [BucketsPerDay]float64
	sum := 0.0
	for i := CyclicDayStart; i < CyclicDayStart+BucketsPerDay; i++ {
		x := float64(i)
		v := gammaCDF(x+0.5, p.ANum, p.BNum) - gammaCDF(x-0.5, p.ANum, p.BNum)
		w[(i-1)%BucketsPerDay] = v
		sum += v
	}
	mean := sum / BucketsPerDay
	for k := range w {
		w[k] /= mean
		if !(w[k] > 0) || math.IsInf(w[k], 0) {
			return w, fmt.Errorf("ANum, BNum = %v, %v: the daily cycle gives bucket %d no arrivals", p.ANum, p.BNum, k)
		}
	}
	return w, nil
}
