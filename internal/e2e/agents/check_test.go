package agents

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/internal/event"
)

// This file checks what the tests gather, independently of the server:
// the event log folded by hand (foldLog), the jobs' own records parsed
// from their output files (parseOutput), and a sweep over intervals of
// use (sweep). check_unit_test.go shows that each of them finds what it
// is meant to find.

// attempt is one attempt of a job as the event log tells it.
type attempt struct {
	job      int64
	n        int
	place    event.Placement
	placedAt int64
	started  int // job.started events for it
	pid      int
	startAt  int64
	host     string // job.started's host
	fin      *event.Finished
	finAt    int64
}

// logView is the event log folded by hand.
type logView struct {
	submits  map[int64]*event.Submit
	attempts map[int64][]*attempt // each job's attempts, in order
	maxUse   map[string]float64   // the most each host's slots (and each shared resource) were used at once
	errs     []string
}

func (v *logView) errorf(format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf(format, args...))
}

// foldLog folds evs: every cycle's placement holds its slots per host
// and its shared resources from its cycle.decided event to its attempt's
// job.finished; at no event may a host hold more slots than capacity
// gives it, nor the jobs more of a shared resource than shared gives,
// and no placement may be on a host that is not up (registered, not lost
// since). Each attempt must be placed once, after its job's submit and
// its previous attempt's requeue, started at most once, on its first
// host, and finished once, after its placement; a job's attempts are
// numbered 1, 2, ... .
func foldLog(evs []event.Event, capacity map[string]int, shared map[string]float64) *logView {
	v := &logView{submits: map[int64]*event.Submit{}, attempts: map[int64][]*attempt{}, maxUse: map[string]float64{}}
	use := map[string]float64{}
	up := map[string]bool{}
	cur := func(job int64, n int) *attempt {
		as := v.attempts[job]
		if len(as) == 0 || as[len(as)-1].n != n {
			return nil
		}
		return as[len(as)-1]
	}
	hold := func(a *attempt, sign float64) {
		for _, h := range a.place.Hosts {
			use[h.Host] += sign * float64(h.Slots)
			v.maxUse[h.Host] = max(v.maxUse[h.Host], use[h.Host])
			if int(use[h.Host]) > capacity[h.Host] {
				v.errorf("event at %d: host %s holds %v slots, more than its %d (job %d attempt %d placed)", a.placedAt, h.Host, use[h.Host], capacity[h.Host], a.job, a.n)
			}
		}
		for r, x := range a.place.Shared {
			use[r] += sign * x
			v.maxUse[r] = max(v.maxUse[r], use[r])
			if use[r] > shared[r] {
				v.errorf("event at %d: %v of shared resource %s held, more than its %v (job %d attempt %d placed)", a.placedAt, use[r], r, shared[r], a.job, a.n)
			}
		}
	}
	for i, e := range evs {
		if e.Index != uint64(i+1) {
			v.errorf("event %d has index %d", i+1, e.Index)
		}
		switch e.Type {
		case event.JobSubmitted:
			if v.submits[e.Submit.Job] != nil || e.Submit.Job != int64(len(v.submits)+1) {
				v.errorf("event %d: job %d submitted after %d jobs", e.Index, e.Submit.Job, len(v.submits))
			}
			v.submits[e.Submit.Job] = e.Submit
		case event.HostRegistered:
			up[e.Host.Name] = true
		case event.HostLost:
			up[e.Host.Name] = false
		case event.CycleDecided:
			for _, p := range e.Cycle.Started {
				as := v.attempts[p.Job]
				switch {
				case v.submits[p.Job] == nil:
					v.errorf("event %d: job %d placed before its submit", e.Index, p.Job)
				case p.Attempt != len(as)+1:
					v.errorf("event %d: job %d placed as attempt %d after %d attempts", e.Index, p.Job, p.Attempt, len(as))
				case len(as) > 0 && (as[len(as)-1].fin == nil || !as[len(as)-1].fin.Requeued):
					v.errorf("event %d: job %d placed again, its attempt %d not requeued", e.Index, p.Job, len(as))
				}
				for _, h := range p.Hosts {
					if !up[h.Host] {
						v.errorf("event %d: job %d placed on host %s, which is not up", e.Index, p.Job, h.Host)
					}
				}
				a := &attempt{job: p.Job, n: p.Attempt, place: p, placedAt: e.At}
				v.attempts[p.Job] = append(as, a)
				hold(a, 1)
			}
		case event.JobStarted:
			s := e.Started
			a := cur(s.Job, s.Attempt)
			switch {
			case a == nil:
				v.errorf("event %d: job %d attempt %d started, not its current placement", e.Index, s.Job, s.Attempt)
				continue
			case a.started > 0:
				v.errorf("event %d: job %d attempt %d started again (pid %d, first pid %d)", e.Index, s.Job, s.Attempt, s.PID, a.pid)
			case a.fin != nil:
				v.errorf("event %d: job %d attempt %d started after its end", e.Index, s.Job, s.Attempt)
			case s.Host != a.place.Hosts[0].Host:
				v.errorf("event %d: job %d attempt %d started on %s, its first host is %s", e.Index, s.Job, s.Attempt, s.Host, a.place.Hosts[0].Host)
			}
			a.started++
			a.pid, a.startAt, a.host = s.PID, e.At, s.Host
		case event.JobFinished:
			f := e.Finished
			a := cur(f.Job, f.Attempt)
			switch {
			case a == nil:
				v.errorf("event %d: job %d attempt %d finished, not its current placement", e.Index, f.Job, f.Attempt)
				continue
			case a.fin != nil:
				v.errorf("event %d: job %d attempt %d finished again", e.Index, f.Job, f.Attempt)
				continue
			}
			a.fin, a.finAt = f, e.At
			hold(a, -1)
		}
	}
	return v
}

// record is one attempt's lines in a job's output file: the line
// "start NS JOBID PID LSB_MCPU_HOSTS..." and the lines after it up to
// the next start line.
type record struct {
	start int64 // -1 when the line's time is not a number
	jobID string
	pid   int
	mcpu  string
	lines []string
}

// end returns the time of the record's last "end NS" line, or -1.
func (r record) end() int64 {
	for i := len(r.lines) - 1; i >= 0; i-- {
		if ns, ok := strings.CutPrefix(r.lines[i], "end "); ok {
			if t, err := strconv.ParseInt(ns, 10, 64); err == nil {
				return t
			}
			return -1
		}
	}
	return -1
}

// parseOutput splits an output file into the lines before the first
// start line and the records.
func parseOutput(s string) (pre []string, recs []record) {
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if s == "" {
			break
		}
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "start" {
			r := record{start: -1, jobID: f[2], mcpu: strings.Join(f[4:], " ")}
			if t, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				r.start = t
			}
			r.pid, _ = strconv.Atoi(f[3])
			recs = append(recs, r)
			continue
		}
		if len(recs) == 0 {
			pre = append(pre, line)
			continue
		}
		recs[len(recs)-1].lines = append(recs[len(recs)-1].lines, line)
	}
	return pre, recs
}

// mcpuHosts is LSB_MCPU_HOSTS of a placement: each host and its slots,
// first host first.
func mcpuHosts(p event.Placement) string {
	var f []string
	for _, h := range p.Hosts {
		f = append(f, h.Host, strconv.Itoa(h.Slots))
	}
	return strings.Join(f, " ")
}

// xceHosts is XCE_HOSTS of a placement: one host name per slot.
func xceHosts(p event.Placement) string {
	var f []string
	for _, h := range p.Hosts {
		for range h.Slots {
			f = append(f, h.Host)
		}
	}
	return strings.Join(f, " ")
}

// parseMCPU reads LSB_MCPU_HOSTS back into slots per host.
func parseMCPU(s string) (map[string]int, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f)%2 != 0 {
		return nil, fmt.Errorf("LSB_MCPU_HOSTS %q: want host and slots pairs", s)
	}
	out := map[string]int{}
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.Atoi(f[i+1])
		if err != nil || n < 1 || out[f[i]] != 0 {
			return nil, fmt.Errorf("LSB_MCPU_HOSTS %q: bad pair %q %q", s, f[i], f[i+1])
		}
		out[f[i]] = n
	}
	return out, nil
}

// interval is what a job used from start to end (its own records):
// slots per host, and shared resources, by name.
type interval struct {
	job        int64
	start, end int64
	use        map[string]int
}

// sweep goes through the intervals' starts and ends in time order (at
// the same instant, ends first: the intervals are half-open) and returns
// the most of each name used at once, and an error for each time a name
// was used beyond its limit (names without a limit are not checked).
func sweep(ivs []interval, limit map[string]int) (most map[string]int, errs []string) {
	type edge struct {
		t     int64
		delta int // +1 start, -1 end
		iv    *interval
	}
	var edges []edge
	for i := range ivs {
		iv := &ivs[i]
		if iv.end < iv.start {
			errs = append(errs, fmt.Sprintf("job %d: ends at %d before it starts at %d", iv.job, iv.end, iv.start))
			continue
		}
		edges = append(edges, edge{iv.start, 1, iv}, edge{iv.end, -1, iv})
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.delta, b.delta)) })
	most, cur := map[string]int{}, map[string]int{}
	running := map[*interval]bool{}
	for _, e := range edges {
		if e.delta < 0 {
			delete(running, e.iv)
		} else {
			running[e.iv] = true
		}
		for name, n := range e.iv.use {
			cur[name] += e.delta * n
			most[name] = max(most[name], cur[name])
			if l, ok := limit[name]; ok && e.delta > 0 && cur[name] > l {
				var jobs []int64
				for iv := range running {
					if iv.use[name] > 0 {
						jobs = append(jobs, iv.job)
					}
				}
				slices.Sort(jobs)
				errs = append(errs, fmt.Sprintf("at %d: %s used %d, more than its %d, by jobs %v", e.t, name, cur[name], l, jobs))
			}
		}
	}
	return most, errs
}
