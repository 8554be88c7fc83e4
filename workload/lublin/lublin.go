// Package lublin generates synthetic workloads with the Lublin–Feitelson
// model of rigid parallel jobs (Uri Lublin and Dror G. Feitelson, "The
// workload on parallel supercomputers: modeling the characteristics of rigid
// jobs", Journal of Parallel and Distributed Computing 63(11), pp.
// 1105–1122, 2003), following the authors' reference generator
// m_lublin99.c from the Parallel Workloads Archive. It is xce's built-in
// workload for the simulator (docs/lublin.md).
//
// Each job has a size, a runtime and a submit time:
//
//   - size: serial with probability SerialProb; otherwise log2(size) is drawn
//     from a two-stage uniform distribution on [ULow, UMed, UHi], and, with
//     probability Pow2Prob (of all jobs), rounded to an integer, which makes
//     the size a power of two;
//   - runtime: ln(runtime) is hyper-gamma, a mixture of two gamma
//     distributions whose weight depends linearly on the size, so larger
//     jobs tend to run longer;
//   - arrivals: ln(inter-arrival time) at rush hours is gamma distributed,
//     and a daily cycle of 48 half-hour buckets stretches time outside the
//     rush hours.
//
// The model has no runtime estimates and no users: generated jobs carry
// ReqTime = -1 and User = -1. docs/lublin.md describes the model, every
// parameter and its source, and compares the output with the reference
// generator's.
package lublin

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/xce-sched/xce/workload/swf"
)

// Queue numbers written to swf.Job.Queue, as m_lublin99.c writes the job
// type to SWF field 15.
const (
	QueueInteractive = 0 // an interactive job [ACTIVE]
	QueueBatch       = 1 // a batch job [BATCH]
)

// Model is a configured Lublin–Feitelson workload generator. The zero value
// is not usable; build one with New, or set at least Nodes.
//
// Generation is deterministic: the same configuration (Nodes, Seed,
// Interactive, StartHour, Batch, Inter) always gives the same jobs, on every
// platform. The random stream is math/rand/v2's PCG (PCG-DXSM, as NumPy's,
// whose output Go's own tests pin), and all floating-point work avoids
// platform-dependent results (see fmath.go).
//
// Generate does not modify the Model and may run concurrently with other
// Generate calls; Next and Reset modify it.
type Model struct {
	// Nodes is the machine size in nodes; every job needs 1..Nodes of them
	// (one processor per node: AllocProcs = ReqProcs = nodes). At least 1.
	Nodes int
	// Seed selects the pseudo-random stream (PCG, math/rand/v2).
	Seed uint64
	// Interactive adds a stream of interactive jobs, with their own
	// parameters (Inter) and arrival process, merged with the batch stream
	// in submit order, as m_lublin99.c does with INCLUDE_JOBS_TYPE 1. When
	// false (the default) all jobs are batch jobs.
	Interactive bool
	// StartHour is the hour of the day (0..23) at time 0, the origin of the
	// submit times [START, 0 in the C code].
	StartHour int
	// Batch holds the batch stream's parameters; the zero Params means
	// BatchParams(Nodes). New fills in BatchParams(nodes), so after
	// changing Nodes set Batch again (or to Params{}) to rescale the sizes.
	Batch Params
	// Inter holds the interactive stream's parameters, used only when
	// Interactive is set; the zero Params means InteractiveParams(Nodes).
	// New fills in InteractiveParams(nodes).
	Inter Params

	g *generator // the stream behind Next
}

// New returns a model of a machine of nodes nodes generating batch jobs
// from seed, with the parameters of BatchParams(nodes).
func New(nodes int, seed uint64) *Model {
	return &Model{
		Nodes: nodes, Seed: seed,
		Batch: BatchParams(nodes), Inter: InteractiveParams(nodes),
	}
}

// params returns the parameter sets in use, with zero values defaulted.
func (m *Model) params() (batch, inter Params) {
	batch, inter = m.Batch, m.Inter
	if batch == (Params{}) {
		batch = BatchParams(m.Nodes)
	}
	if inter == (Params{}) {
		inter = InteractiveParams(m.Nodes)
	}
	return batch, inter
}

// Validate reports the first configuration error: a machine size below 1,
// a start hour outside 0..23, or a parameter out of its domain.
func (m *Model) Validate() error {
	if m.Nodes < 1 {
		return fmt.Errorf("lublin: Nodes = %d: want at least 1", m.Nodes)
	}
	if m.StartHour < 0 || m.StartHour > 23 {
		return fmt.Errorf("lublin: StartHour = %d: want 0..23", m.StartHour)
	}
	batch, inter := m.params()
	if err := batch.Validate(); err != nil {
		return fmt.Errorf("lublin: Batch.%w", err)
	}
	if _, err := dayWeights(batch); err != nil {
		return fmt.Errorf("lublin: Batch.%w", err)
	}
	if m.Interactive {
		if err := inter.Validate(); err != nil {
			return fmt.Errorf("lublin: Inter.%w", err)
		}
		if _, err := dayWeights(inter); err != nil {
			return fmt.Errorf("lublin: Inter.%w", err)
		}
	}
	return nil
}

// Generate returns the model's first n jobs in submit order, with IDs 1..n:
// the same jobs as n calls of Next after Reset, whatever Next calls came
// before. It panics if Validate reports an error.
func (m *Model) Generate(n int) []swf.Job {
	g := m.newGenerator()
	jobs := make([]swf.Job, 0, max(n, 0))
	for range n {
		jobs = append(jobs, g.next())
	}
	return jobs
}

// Next returns the next job of the model's stream: the first call (and the
// first after Reset) starts the stream from the current configuration and
// returns job 1; later changes to the configuration take effect at the
// next Reset. It panics if Validate reports an error.
func (m *Model) Next() swf.Job {
	if m.g == nil {
		m.g = m.newGenerator()
	}
	return m.g.next()
}

// Reset restarts the stream behind Next.
func (m *Model) Reset() { m.g = nil }

// stream is one job type's arrival process [m_lublin99.c calc_next_arrive,
// whose static and global variables it holds].
type stream struct {
	p      Params
	queue  int64
	w      [BucketsPerDay]float64 // relative arrival rate per bucket, mean 1
	bucket int                    // bucket of the next arrival
	points float64                // points spent in that bucket
	frac   float64                // fraction of that bucket elapsed [reminder]
	next   float64                // next arrival, seconds from time 0
}

// advance draws the stream's next inter-arrival time. A gamma variate g
// (redrawn above MaxLogInterarrival) buys e^g / BucketSeconds points; a
// bucket of weight w costs w points, so time runs through busy buckets
// slowly and quiet ones fast, and over a whole day (48 points) exactly as
// many seconds pass as were bought.
func (st *stream) advance(s *sampler) {
	shape := float64(st.p.AArr * st.p.ARAR)
	g := s.gamma(shape, st.p.BArr)
	for g > MaxLogInterarrival {
		g = s.gamma(shape, st.p.BArr)
	}
	st.points += exp(g) / BucketSeconds
	buckets := 0
	for st.points > st.w[st.bucket] {
		st.points -= st.w[st.bucket]
		st.bucket = (st.bucket + 1) % BucketsPerDay
		buckets++
	}
	frac := st.points / st.w[st.bucket]
	st.next += float64(BucketSeconds*(float64(buckets)+frac)) - float64(BucketSeconds*st.frac)
	st.frac = frac
}

// generator is one run of the model.
type generator struct {
	nodes   int
	maxLog  int // largest k with 2^k <= nodes
	s       *sampler
	streams []*stream // batch first, then interactive
	id      int64
}

func (m *Model) newGenerator() *generator {
	if err := m.Validate(); err != nil {
		panic(err)
	}
	batch, inter := m.params()
	g := &generator{
		nodes:  m.Nodes,
		maxLog: bits.Len(uint(m.Nodes)) - 1,
		s:      newSampler(m.Seed),
	}
	add := func(p Params, queue int64) {
		w, _ := dayWeights(p) // checked by Validate
		st := &stream{p: p, queue: queue, w: w, bucket: m.StartHour * BucketsPerDay / 24}
		st.advance(g.s) // the first arrival [arrive_init]
		g.streams = append(g.streams, st)
	}
	add(batch, QueueBatch)
	if m.Interactive {
		add(inter, QueueInteractive)
	}
	return g
}

// next returns the next job [m_lublin99.c main loop body]: the stream whose
// next arrival comes first (interactive on a tie, as in the C code) gives
// the job and draws its following arrival; then the size, then the runtime.
func (g *generator) next() swf.Job {
	st := g.streams[0]
	for _, o := range g.streams[1:] {
		if o.next <= st.next {
			st = o
		}
	}
	submit := st.next
	st.advance(g.s)
	size := g.size(st.p)
	run := g.runtime(st.p, size)
	g.id++
	return swf.Job{
		ID: g.id, Submit: int64(math.Floor(submit)), Wait: -1, Run: run,
		AllocProcs: int64(size), AvgCPU: -1, UsedMem: -1,
		ReqProcs: int64(size), ReqTime: -1, ReqMem: -1, Status: 1,
		User: -1, Group: -1, Executable: -1, Queue: st.queue, Partition: -1,
		PrecedingID: -1, ThinkTime: -1,
	}
}

// size draws a job size in 1..nodes [m_lublin99.c calc_number_of_nodes].
// One uniform u decides: u <= SerialProb gives a serial job; u <=
// SerialProb+Pow2Prob a power-of-two job, 2^round(x); otherwise
// round(2^x), with x two-stage uniform. A power-of-two job may exceed 2^UHi
// (up to 2^round(UHi)), as in the C code. A size above the machine (when
// nodes is not a power of two) becomes the largest power of two that fits
// for a power-of-two job, and the machine size otherwise.
func (g *generator) size(p Params) int {
	u := g.s.uniform()
	if u <= p.SerialProb {
		return 1
	}
	x := g.s.twoStageUniform(p.ULow, p.UMed, p.UHi, p.UProb)
	if u <= p.SerialProb+p.Pow2Prob {
		k := int(math.Floor(x + 0.5))
		return 1 << min(max(k, 0), g.maxLog)
	}
	v := math.Floor(exp2(x) + 0.5)
	if v >= float64(g.nodes) {
		return g.nodes
	}
	return max(int(v), 1)
}

// runtime draws a runtime in seconds, 1 .. e^MaxLogRuntime
// [m_lublin99.c time_from_nodes]: ln(runtime) is hyper-gamma with the first
// component's weight PA×size + PB clamped to [0, 1], redrawn while above
// MaxLogRuntime; the runtime is e^x truncated to whole seconds.
func (g *generator) runtime(p Params, size int) int64 {
	w := math.Min(1, math.Max(0, float64(p.PA*float64(size))+p.PB))
	x := g.s.hyperGamma(p.A1, p.B1, p.A2, p.B2, w)
	for x > MaxLogRuntime {
		x = g.s.hyperGamma(p.A1, p.B1, p.A2, p.B2, w)
	}
	return max(int64(exp(x)), 1)
}
