package sim

import (
	"math"
	"slices"

	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
)

// Tau is the bounded-slowdown threshold in seconds (Feitelson, Rudolph,
// Schwiegelshohn, Sevcik, Wong 1997, "Theory and practice in parallel job
// scheduling"; Feitelson 2001, "Metrics for parallel job scheduling and
// their convergence"): runtimes shorter than Tau count as Tau.
const Tau = 10

// Point is one sample of the simulation's time series, taken after a cycle.
type Point struct {
	T       int64 // seconds
	Pending int   // submitted jobs still pending
	Busy    int   // slots held by running jobs
}

// Recorder follows a simulation through its Observe hook: the time series
// of queue length and busy slots, and how long jobs pended for each main
// reason.
type Recorder struct {
	Series []Point
	busy   int
	lastT  int64
	counts [256]int     // pending jobs per main reason after the last cycle
	pendS  [256]float64 // job-seconds pending per main reason
	used   []uint8      // the reasons with counts above 0
	cycles int
}

// NewRecorder returns a recorder for a simulation of s (jobs already
// running in s count as busy from the start).
func NewRecorder(s *runtime.Scheduler) *Recorder {
	// A cycle per submit or end time, at most: room for as many points.
	r := &Recorder{lastT: -1, Series: make([]Point, 0, 2*len(s.Jobs)+1)}
	for _, j := range s.Jobs {
		if j.State == framework.Running {
			r.busy += j.Alloc.Slots()
		}
	}
	return r
}

// Observe is the Observe hook: it charges the time since the last cycle to
// the reasons the pending jobs had, then takes the new state.
func (r *Recorder) Observe(e *Event) {
	r.advance(e.Now)
	for _, j := range e.Ended {
		r.busy -= j.Alloc.Slots()
	}
	for _, k := range r.used {
		r.counts[k] = 0
	}
	r.used = r.used[:0]
	pending := 0
	for _, j := range e.Considered {
		switch {
		case j.State == framework.Running && j.Start == e.Now:
			r.busy += j.Alloc.Slots()
		case j.State == framework.Pending && j.Reasons.Main != framework.BadRequest:
			// Rejected jobs (BadRequest) are left out of the metrics.
			r.count(j.Reasons.Main, 1)
			pending++
		}
	}
	for _, counts := range [2][]runtime.ReasonCount{e.Aside, e.Standing} {
		for _, b := range counts {
			if b.Reason != framework.BadRequest && b.Jobs > 0 {
				r.count(b.Reason, b.Jobs)
				pending += b.Jobs
			}
		}
	}
	r.cycles++
	r.Series = append(r.Series, Point{T: e.Now, Pending: pending, Busy: r.busy})
}

// count adds n pending jobs with main reason k.
func (r *Recorder) count(k framework.Reason, n int) {
	if r.counts[k] == 0 {
		r.used = append(r.used, uint8(k))
	}
	r.counts[k] += n
}

func (r *Recorder) advance(now int64) {
	if r.lastT >= 0 {
		dt := float64(now - r.lastT)
		for _, k := range r.used {
			r.pendS[k] += float64(r.counts[k]) * dt
		}
	}
	r.lastT = now
}

// Summary is the outcome of a simulation (docs/metrics.md gives every
// definition and its source). Times are in seconds.
type Summary struct {
	Jobs       int `json:"jobs"`       // jobs that ran to completion, the metrics' population
	Rejected   int `json:"rejected"`   // jobs that could never run (BadRequest), left out of the metrics
	Unfinished int `json:"unfinished"` // other jobs that did not finish (still pending or running)
	Cycles     int `json:"cycles"`

	MakespanS     int64   `json:"makespan_s"`
	Utilization   float64 `json:"utilization"`
	WaitMeanS     float64 `json:"wait_mean_s"`
	WaitMedianS   float64 `json:"wait_median_s"`
	WaitP95S      float64 `json:"wait_p95_s"`
	ResponseMeanS float64 `json:"response_mean_s"`
	SlowdownMean  float64 `json:"slowdown_mean"`
	BSLDMean      float64 `json:"bsld_mean"`
	// PendingByReasonS is the job-seconds spent pending, by main reason code.
	PendingByReasonS map[string]float64 `json:"pending_by_reason_s"`
}

// Summarize computes the metrics over s's jobs after a run recorded by rec,
// for a cluster of totalSlots slots. Only jobs that finished are measured:
//
//	wait = start − submit; run = end − start; response = end − submit
//	slowdown = response / run (jobs with run > 0)
//	bounded slowdown = max(1, response / max(run, Tau))
//	makespan = last end − first submit
//	utilization = Σ run × slots / (totalSlots × makespan)
//
// The median is the mean of the two middle values for an even count; p95
// is the nearest-rank percentile (the ⌈0.95·n⌉-th smallest).
func Summarize(s *runtime.Scheduler, rec *Recorder, totalSlots int) Summary {
	return summarize(s.Jobs, rec, totalSlots, Tau)
}

// summarize is Summarize over jobs (rec may be nil), with tau as the
// bounded slowdown's threshold in the jobs' time unit.
func summarize(jobs []*framework.Job, rec *Recorder, totalSlots int, tau float64) Summary {
	var sum Summary
	waits := make([]int64, 0, len(jobs))
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	var work, waitSum, respSum, sldSum, bsldSum float64
	sldN := 0
	for _, j := range jobs {
		switch {
		case j.State == framework.Done:
		case j.State == framework.Pending && j.Reasons.Main == framework.BadRequest:
			sum.Rejected++
			continue
		default:
			sum.Unfinished++
			continue
		}
		sum.Jobs++
		wait := float64(j.Start - j.Spec.Submit)
		run := float64(j.End - j.Start)
		resp := float64(j.End - j.Spec.Submit)
		waits = append(waits, j.Start-j.Spec.Submit)
		waitSum += wait
		respSum += resp
		if run > 0 {
			sldSum += resp / run
			sldN++
		}
		bsldSum += max(1, resp/max(run, tau))
		work += run * float64(j.Alloc.Slots())
		first = min(first, j.Spec.Submit)
		last = max(last, j.End)
	}
	if rec != nil {
		rec.advance(max(last, rec.lastT))
		sum.Cycles = rec.cycles
		sum.PendingByReasonS = map[string]float64{}
		for reason, v := range rec.pendS {
			if v > 0 {
				sum.PendingByReasonS[framework.Reason(reason).String()] = v
			}
		}
	}
	if sum.Jobs == 0 {
		return sum
	}
	n := float64(sum.Jobs)
	sum.MakespanS = last - first
	if sum.MakespanS > 0 && totalSlots > 0 {
		sum.Utilization = work / (float64(totalSlots) * float64(sum.MakespanS))
	}
	sum.WaitMeanS = waitSum / n
	sum.ResponseMeanS = respSum / n
	sum.BSLDMean = bsldSum / n
	if sldN > 0 {
		sum.SlowdownMean = sldSum / float64(sldN)
	}
	// Sorted as integers (times are at most 10^15, exact as float64s).
	slices.Sort(waits)
	sum.WaitMedianS = median(waits)
	sum.WaitP95S = nearestRank(waits, 0.95)
	return sum
}

func median(sorted []int64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return float64(sorted[n/2])
	}
	return (float64(sorted[n/2-1]) + float64(sorted[n/2])) / 2
}

// nearestRank returns the ⌈p·n⌉-th smallest value (1-based).
func nearestRank(sorted []int64, p float64) float64 {
	k := int(math.Ceil(p * float64(len(sorted))))
	return float64(sorted[max(k, 1)-1])
}

// scale turns a summary computed in ticks of tick seconds into seconds.
func (s *Summary) scale(tick float64) {
	if tick == 1 {
		return
	}
	s.MakespanS = int64(math.Round(float64(s.MakespanS) * tick))
	s.WaitMeanS *= tick
	s.WaitMedianS *= tick
	s.WaitP95S *= tick
	s.ResponseMeanS *= tick
	for k, v := range s.PendingByReasonS {
		s.PendingByReasonS[k] = v * tick
	}
}
