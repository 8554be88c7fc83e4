package sim

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/internal/state"
	"github.com/xce-sched/xce/resreq"
	"github.com/xce-sched/xce/workload/swf"
)

// History is a live server's job history made ready to replay (`xce sim
// --from-data`): the jobs that ran to an end, with their requests as
// submitted, their submit times and their actual run times, over a
// cluster; and the metrics of what really happened to them.
type History struct {
	Prepared *Prepared
	// Workload holds the same jobs as SWF records, with what really
	// happened (wait, run time, slots), for the simulated schedule.swf.
	Workload *Workload
	// Recorded: the metrics of the live run, over the same jobs and by the
	// same definitions (Summarize), on the same whole-second clock (its
	// Cycles are the cycles the server recorded).
	Recorded Summary
	// NeverRan: jobs that ended without running (killed while pending);
	// Unfinished: jobs still pending or running at the log's end. Both are
	// left out: there is no run time to replay.
	NeverRan, Unfinished int
}

// FromHistory turns the state folded from a live server's whole log into a
// replay. Times become ticks (whole seconds for a tick of 1s, as the
// scheduler counts them) from the first submit, each time cut to its tick
// (estimates and the queues' times rounded up to a whole tick); a job's
// run time is its last attempt's (from its placement to its end), and its
// estimate its -W; jobs keep their IDs, in submit order. The cluster is base when given, else the configuration
// the log ends with; policy, when set, is given to every queue. It fails,
// naming the job, when the cluster has no queue of a job's name or the
// job's resource requirement does not parse.
func FromHistory(st *state.State, base *cluster.Cluster, policy cluster.Policy, tick time.Duration) (*History, error) {
	if tick <= 0 || tick > time.Hour {
		return nil, fmt.Errorf("tick %v: want more than 0 and at most 1h", tick)
	}
	if base == nil {
		if st.Config == "" {
			return nil, fmt.Errorf("the log records no configuration: give one")
		}
		c, _, err := cluster.ParseConfig("the configuration recorded by the log", []byte(st.Config))
		if err != nil {
			return nil, err
		}
		base = c
	}
	c, err := baseCluster(nil, Setup{Base: base, Policy: policy})
	if err != nil {
		return nil, err
	}
	c.Jobs = nil
	h := &History{Prepared: &Prepared{Cluster: c, Tick: tick.Seconds()}, Workload: &Workload{}}
	// Times in ticks: the history's, cut to the tick; the configuration's
	// and the estimates' (whole seconds), rounded up.
	at := func(ns int64) int64 { return ns / tick.Nanoseconds() }
	span := func(s int64) int64 { return ceilDiv(s*int64(time.Second), tick.Nanoseconds()) }
	for i := range c.Queues {
		c.Queues[i].DefaultRunLimit = span(c.Queues[i].DefaultRunLimit)
		c.Queues[i].HalfLife = span(c.Queues[i].HalfLife)
	}
	for _, host := range c.Hosts {
		h.Prepared.TotalSlots += host.Slots
	}
	var origin int64
	for i, j := range st.Jobs {
		if i == 0 {
			origin = at(j.SubmitTime)
		}
		switch {
		case j.State == state.Pend || j.State == state.Run:
			h.Unfinished++
			continue
		case j.StartTime == 0:
			h.NeverRan++
			continue
		}
		q, ok := c.QueueByName(j.Queue)
		if !ok {
			return nil, fmt.Errorf("job %d: queue %q is not in the configuration", j.Job, j.Queue)
		}
		req, err := resreq.Parse(j.ResReq)
		if err != nil {
			return nil, fmt.Errorf("job %d: resource requirement: %w", j.Job, err)
		}
		submit := at(j.SubmitTime) - origin
		start, end := at(j.StartTime)-origin, at(j.EndTime)-origin
		run := max(end-start, 0)
		spec := cluster.Job{ID: cluster.JobID(j.Job), User: j.User, Project: j.Project, Queue: q, Submit: submit,
			TasksMin: j.TasksMin, TasksMax: j.TasksMax, ResReq: j.ResReq, Req: req, Runtime: run, Estimate: span(j.Estimate)}
		if spec.Project == "" {
			spec.Project = cluster.DefaultProject
		}
		c.Jobs = append(c.Jobs, spec)
		slots := 0
		for _, a := range j.Hosts {
			slots += a.Slots
		}
		status := int64(0)
		if j.State == state.Done {
			status = 1
		}
		h.Workload.Jobs = append(h.Workload.Jobs, swf.Job{ID: j.Job, Submit: submit, Wait: start - submit, Run: run,
			AllocProcs: int64(slots), AvgCPU: -1, UsedMem: -1, ReqProcs: int64(j.TasksMax), ReqTime: estimateOrUnknown(j.Estimate),
			ReqMem: -1, Status: status, User: -1, Group: -1, Executable: -1, Queue: int64(q) + 1, Partition: -1, PrecedingID: -1, ThinkTime: -1})
	}
	h.Recorded = HistoryMetrics(st, h.Prepared.TotalSlots, tick)
	h.Workload.Header = swf.Header{MaxNodes: int64(len(c.Hosts)), MaxProcs: int64(h.Prepared.TotalSlots), UnixStartTime: -1,
		Comments: []string{fmt.Sprintf("The job history of a live xce server (xce sim --from-data); times count ticks of %v.", tick)}}
	if len(st.Jobs) > 0 {
		h.Workload.Header.UnixStartTime = st.Jobs[0].SubmitTime / int64(time.Second)
	}
	return h, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func estimateOrUnknown(s int64) int64 {
	if s <= 0 {
		return -1
	}
	return s
}

// HistoryMetrics returns the metrics (Summarize's definitions) of the jobs
// of a folded log that ran to an end, as they ran: each job's submit,
// last start and end instant cut to tick, for a cluster of totalSlots
// slots; Cycles is the log's recorded cycles. Jobs that never ran or are
// unfinished are left out, as FromHistory leaves them out.
func HistoryMetrics(st *state.State, totalSlots int, tick time.Duration) Summary {
	at := func(ns int64) int64 { return ns / tick.Nanoseconds() }
	var jobs []*framework.Job
	for _, j := range st.Jobs {
		if j.State == state.Pend || j.State == state.Run || j.StartTime == 0 {
			continue
		}
		slots := 0
		for _, a := range j.Hosts {
			slots += a.Slots
		}
		start := at(j.StartTime)
		jobs = append(jobs, &framework.Job{Spec: &cluster.Job{ID: cluster.JobID(j.Job), Submit: at(j.SubmitTime)}, State: framework.Done,
			Start: start, End: max(at(j.EndTime), start), Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Slots: slots}}}})
	}
	sum := summarize(jobs, nil, totalSlots, Tau/tick.Seconds())
	sum.scale(tick.Seconds())
	sum.Cycles = int(st.Cycles)
	return sum
}

// HistorySeries returns the queue length and busy slots of a folded log
// over time, a point at each submit, start and end (T in seconds), as the
// simulator's Recorder samples them, for the plots.
func HistorySeries(st *state.State) []Point {
	type change struct {
		at            int64
		pending, busy int
	}
	var cs []change
	for _, j := range st.Jobs {
		slots := 0
		for _, a := range j.Hosts {
			slots += a.Slots
		}
		cs = append(cs, change{j.SubmitTime, 1, 0})
		switch {
		case j.StartTime > 0:
			cs = append(cs, change{j.StartTime, -1, slots})
			if j.State == state.Done || j.State == state.Exit {
				cs = append(cs, change{max(j.EndTime, j.StartTime), 0, -slots})
			}
		case j.State == state.Exit: // ended while pending
			cs = append(cs, change{j.EndTime, -1, 0})
		}
	}
	slices.SortStableFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	out := make([]Point, 0, len(cs))
	p := Point{}
	for _, c := range cs {
		p.Pending += c.pending
		p.Busy += c.busy
		p.T = c.at / int64(time.Second)
		out = append(out, p)
	}
	return out
}
