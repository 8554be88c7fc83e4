package dashboard

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/internal/store"
	"github.com/xce-sched/xce/jobarray"
)

// job states of the history's fold.
const (
	hPend byte = iota + 1
	hRun
	hSusp
	hEnded
)

// hjob is one job as the history's fold keeps it: its state, the slots
// its current or last attempt holds, and whether preemption requeued it
// while its attempt is being killed.
type hjob struct {
	st        byte
	requeuing bool
	slots     int32
}

// fold is the part of the state the charts need, folded from the event
// log as state.State.Apply folds it (checked against it by
// TestFoldMatchesState): how many jobs pend, run and are suspended, the
// job slots running jobs hold (as GET /v1/hosts counts them: RUN jobs'),
// and the configuration's slots.
type fold struct {
	jobs            []hjob // job ID - 1
	pend, run, susp int
	used, capacity  int
}

func (f *fold) job(id event.JobID) *hjob {
	if id < 1 || id > int64(len(f.jobs)) {
		return nil
	}
	return &f.jobs[id-1]
}

// leave takes j out of the running or suspended counts.
func (f *fold) leave(j *hjob) {
	switch j.st {
	case hRun:
		f.run--
		f.used -= int(j.slots)
	case hSusp:
		f.susp--
	case hPend:
		f.pend--
	}
}

// apply folds e. Events the state would refuse are not in a log; one
// that names an unknown job is ignored.
func (f *fold) apply(e *event.Event) {
	switch e.Type {
	case event.JobSubmitted:
		n := 1
		if e.Submit.Array != "" {
			if spec, err := jobarray.Parse(e.Submit.Array, jobarray.MaxSize); err == nil {
				n = len(spec.Indices)
			}
		}
		for range n {
			f.jobs = append(f.jobs, hjob{st: hPend})
		}
		f.pend += n
	case event.CycleDecided:
		c := e.Cycle
		for _, id := range c.Resumed {
			if j := f.job(id); j != nil && j.st == hSusp {
				f.leave(j)
				j.st = hRun
				f.run++
				f.used += int(j.slots)
			}
		}
		for _, p := range c.Started {
			if j := f.job(p.Job); j != nil && j.st == hPend {
				slots := 0
				for _, a := range p.Hosts {
					slots += a.Slots
				}
				f.leave(j)
				j.st, j.slots, j.requeuing = hRun, int32(slots), false
				f.run++
				f.used += slots
			}
		}
		for _, p := range c.Preempted {
			j := f.job(p.Job)
			if j == nil || j.st != hRun && j.st != hSusp {
				continue
			}
			f.leave(j)
			if p.Action == event.PreemptSuspend {
				j.st = hSusp
				f.susp++
				continue
			}
			j.st, j.requeuing = hPend, true
			f.pend++
		}
	case event.JobFinished:
		j := f.job(e.Finished.Job)
		if j == nil {
			return
		}
		if j.requeuing {
			j.requeuing = false // the requeued attempt is gone; the job pends on
			return
		}
		if j.st != hRun && j.st != hSusp {
			return
		}
		f.leave(j)
		if e.Finished.Requeued {
			j.st = hPend
			f.pend++
			return
		}
		j.st = hEnded
	case event.JobKilled:
		if j := f.job(e.Killed.Job); j != nil && j.st == hPend {
			f.leave(j)
			j.st, j.requeuing = hEnded, false
		}
	case event.ConfigReloaded:
		if c, _, err := cluster.ParseConfig("configuration", []byte(e.Config.Text)); err == nil {
			f.capacity = 0
			for _, h := range c.Hosts {
				f.capacity += h.Slots
			}
		}
	}
}

// values are the fold's counts as the series chart them.
func (f *fold) values() [nSeries]float64 {
	return [nSeries]float64{float64(f.pend), float64(f.run), float64(f.used), float64(f.capacity)}
}

// The series: pending jobs, running jobs, slots used, slots in all.
const nSeries = 4

// MaxPoints bounds the points of each series: when the history would
// need more, the step doubles and pairs of points merge.
const MaxPoints = 1024

// buckets is a time series of the fold's values at a step, each point
// the mean over its step (time-weighted: a job that ran a second counts
// a second, whatever the step).
type buckets struct {
	start int64 // Unix ns of the first event
	step  int64 // ns: a second times a power of two
	sums  [][nSeries]float64
	last  int64 // up to when the sums hold the values
	cur   [nSeries]float64
}

// advance integrates the current values up to t (Unix ns); a t before
// the last one (a clock set back) integrates nothing.
func (b *buckets) advance(t int64) {
	if b.step == 0 {
		b.start, b.last, b.step = t, t, int64(time.Second)
		return
	}
	for t-b.start >= int64(MaxPoints)*b.step {
		b.coarsen()
	}
	for b.last < t {
		i := int((b.last - b.start) / b.step)
		for len(b.sums) <= i {
			b.sums = append(b.sums, [nSeries]float64{})
		}
		end := min(t, b.start+int64(i+1)*b.step)
		for s := range nSeries {
			b.sums[i][s] += b.cur[s] * float64(end-b.last)
		}
		b.last = end
	}
}

// coarsen doubles the step, merging pairs of points.
func (b *buckets) coarsen() {
	n := (len(b.sums) + 1) / 2
	for i := range n {
		a := b.sums[2*i]
		if 2*i+1 < len(b.sums) {
			for s := range nSeries {
				a[s] += b.sums[2*i+1][s]
			}
		}
		b.sums[i] = a
	}
	b.sums = b.sums[:n]
	b.step *= 2
}

// history folds the event log into the charts' series, following it as
// it grows.
type history struct {
	wakeUp chan struct{}

	mu     sync.Mutex
	f      fold
	b      buckets
	next   uint64 // the next event to fold
	caught bool   // the log was read to its end at least once
	err    string // why following the log stopped
}

func newHistory() *history { return &history{wakeUp: make(chan struct{}, 1), next: 1} }

// wake tells follow that events were appended. It never blocks.
func (h *history) wake() {
	select {
	case h.wakeUp <- struct{}{}:
	default:
	}
}

// add folds e, after integrating the values up to its time.
func (h *history) add(e *event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.b.advance(e.At)
	h.f.apply(e)
	h.b.cur = h.f.values()
	h.next = e.Index + 1
}

// follow reads the log from the start (or from its snapshot, when its
// beginning was compacted) to its end, then again whenever woken (or
// every 5 s), until ctx ends.
func (h *history) follow(ctx context.Context, log EventLog, logf func(string, ...any)) {
	for {
		h.mu.Lock()
		from := h.next
		h.mu.Unlock()
		err := log.Read(from, func(e event.Event) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h.add(&e)
			return nil
		})
		if errors.Is(err, store.ErrCompacted) && from == 1 {
			err = h.fromSnapshot(log)
			if err == nil {
				continue
			}
		}
		if err != nil && ctx.Err() == nil {
			logf("dashboard: the history charts stop: %v", err)
			h.mu.Lock()
			h.err = err.Error()
			h.mu.Unlock()
			return
		}
		h.mu.Lock()
		h.caught = true
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-h.wakeUp:
		case <-time.After(5 * time.Second):
		}
	}
}

// fromSnapshot starts the fold from the log's snapshot (its jobs and
// their states; the history begins there).
func (h *history) fromSnapshot(log EventLog) error {
	index, data, ok, err := log.Snapshot()
	if err != nil || !ok {
		return errors.Join(errors.New("the log's beginning was compacted, and there is no snapshot"), err)
	}
	st, err := state.Unmarshal(data)
	if err != nil {
		return err
	}
	var f fold
	if st.Config != "" {
		f.apply(&event.Event{Type: event.ConfigReloaded, Config: &event.Config{Text: st.Config}})
	}
	for _, j := range st.Jobs {
		hj := hjob{requeuing: j.Requeuing}
		for _, a := range j.Hosts {
			hj.slots += int32(a.Slots)
		}
		switch j.State {
		case state.Pend:
			hj.st = hPend
			f.pend++
		case state.Run:
			hj.st = hRun
			f.run++
			f.used += int(hj.slots)
		case state.Susp:
			hj.st = hSusp
			f.susp++
		default:
			hj.st = hEnded
		}
		f.jobs = append(f.jobs, hj)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.f, h.next = f, index+1
	return nil
}

// Series is the answer to GET /ui/v1/series: from Start (Unix seconds),
// one point per Step seconds up to Now, each the mean over its step of
// the jobs pending, the jobs running, the job slots they hold and the
// slots of the configuration; Complete is false while the log is still
// being read from its start, Error says why reading it stopped.
type Series struct {
	Start    float64   `json:"start"`
	Step     float64   `json:"step"`
	Now      float64   `json:"now"`
	Pending  []float64 `json:"pending"`
	Running  []float64 `json:"running"`
	Used     []float64 `json:"used"`
	Capacity []float64 `json:"capacity"`
	Complete bool      `json:"complete"`
	Error    string    `json:"error,omitempty"`
}

// query returns the series up to now (Unix ns), without changing them:
// the last point is the mean over the part of its step gone by.
func (h *history) query(now int64) Series {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.b
	b.sums = append([][nSeries]float64(nil), h.b.sums...)
	s := Series{Complete: h.caught, Error: h.err, Pending: []float64{}, Running: []float64{}, Used: []float64{}, Capacity: []float64{}}
	if b.step == 0 {
		return s
	}
	b.advance(max(now, b.last))
	s.Start, s.Step, s.Now = float64(b.start)/1e9, float64(b.step)/1e9, float64(b.last)/1e9
	out := []*[]float64{&s.Pending, &s.Running, &s.Used, &s.Capacity}
	for i, sum := range b.sums {
		span := float64(b.step)
		if end := b.start + int64(i+1)*b.step; end > b.last {
			span = float64(b.last - (b.start + int64(i)*b.step))
		}
		for k := range nSeries {
			v := 0.0
			if span > 0 {
				v = sum[k] / span
			}
			*out[k] = append(*out[k], math.Round(v*100)/100)
		}
	}
	return s
}

func (h *Handler) series(w http.ResponseWriter, _ *http.Request, _ api.Caller) {
	reply(w, h.hist.query(h.o.Now().UnixNano()))
}
