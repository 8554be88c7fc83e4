package sim

import (
	"fmt"
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
	// The recorded metrics, from the jobs as they really ran.
	recorded := make([]*framework.Job, len(c.Jobs))
	for i := range c.Jobs {
		w := h.Workload.Jobs[i]
		recorded[i] = &framework.Job{Spec: &c.Jobs[i], State: framework.Done, Start: w.Submit + w.Wait, End: w.Submit + w.Wait + w.Run,
			Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Slots: int(w.AllocProcs)}}}}
	}
	h.Recorded = summarize(recorded, nil, h.Prepared.TotalSlots, Tau/tick.Seconds())
	h.Recorded.scale(tick.Seconds())
	h.Recorded.Cycles = int(st.Cycles)
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
