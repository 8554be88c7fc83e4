package sim

import (
	"container/heap"
	"context"
	"slices"

	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
)

// Observe is called after each scheduling cycle with its time (seconds)
// and the jobs it considered, in picking order.
type Observe func(now int64, considered []*framework.Job)

// Run drives s on a virtual clock from the first event up to until
// (seconds, inclusive). The events are job submissions and job ends. At
// each event time it first ends every job whose end has come (releasing
// what it holds), then runs one scheduling cycle over the pending jobs
// submitted by then. A job started at time t ends at t + Runtime; a job
// with Runtime 0 (unknown) runs past until. A running job of the snapshot
// ends at Start + Runtime. It returns the time of the last cycle, or ctx's
// error when ctx is cancelled.
func Run(ctx context.Context, s *runtime.Scheduler, until int64, observe Observe) (int64, error) {
	var ends endQueue
	for _, j := range s.Jobs {
		if j.State == framework.Running && j.Spec.Runtime > 0 {
			heap.Push(&ends, end{j.Start + j.Spec.Runtime, j})
		}
	}
	var submits []int64
	for _, j := range s.Jobs {
		if j.State == framework.Pending {
			submits = append(submits, j.Spec.Submit)
		}
	}
	slices.Sort(submits)
	submits = slices.Compact(submits)

	last := int64(-1)
	for {
		now, ok := nextEvent(submits, &ends, last)
		if !ok || now > until {
			return last, nil
		}
		if err := ctx.Err(); err != nil {
			return last, err
		}
		for ends.Len() > 0 && ends[0].at <= now {
			e := heap.Pop(&ends).(end)
			s.Finish(e.job, e.at)
		}
		considered, err := s.Cycle(ctx, now)
		if err != nil {
			return now, err
		}
		for _, j := range considered {
			if j.State == framework.Running && j.Start == now && j.Spec.Runtime > 0 {
				heap.Push(&ends, end{now + j.Spec.Runtime, j})
			}
		}
		if observe != nil {
			observe(now, considered)
		}
		last = now
	}
}

// nextEvent returns the earliest submit or end time after last.
func nextEvent(submits []int64, ends *endQueue, last int64) (int64, bool) {
	i, _ := slices.BinarySearch(submits, last+1)
	t, ok := int64(0), false
	if i < len(submits) {
		t, ok = submits[i], true
	}
	if ends.Len() > 0 && (!ok || (*ends)[0].at < t) {
		t, ok = (*ends)[0].at, true
	}
	return t, ok
}

type end struct {
	at  int64
	job *framework.Job
}

// endQueue is a min-heap of job ends by time, then job ID.
type endQueue []end

func (q endQueue) Len() int { return len(q) }
func (q endQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].job.Spec.ID < q[j].job.Spec.ID
}
func (q endQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *endQueue) Push(x any)   { *q = append(*q, x.(end)) }
func (q *endQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
