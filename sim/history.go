package sim

import (
	"fmt"

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
// replay. Times become seconds from the first submit (whole seconds, as
// the scheduler counts them; each time is cut to its second first), a job's
// run time is its last attempt's (from its placement to its end), and its
// estimate its -W; jobs keep their IDs, in submit order. The cluster is base when given, else the configuration
// the log ends with; policy, when set, is given to every queue. It fails,
// naming the job, when the cluster has no queue of a job's name or the
// job's resource requirement does not parse.
func FromHistory(st *state.State, base *cluster.Cluster, policy cluster.Policy) (*History, error) {
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
	h := &History{Prepared: &Prepared{Cluster: c}, Workload: &Workload{}}
	for _, host := range c.Hosts {
		h.Prepared.TotalSlots += host.Slots
	}
	var origin int64
	for i, j := range st.Jobs {
		if i == 0 {
			origin = seconds(j.SubmitTime)
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
		submit := seconds(j.SubmitTime) - origin
		start, end := seconds(j.StartTime)-origin, seconds(j.EndTime)-origin
		run := max(end-start, 0)
		spec := cluster.Job{ID: cluster.JobID(j.Job), User: j.User, Project: j.Project, Queue: q, Submit: submit,
			TasksMin: j.TasksMin, TasksMax: j.TasksMax, ResReq: j.ResReq, Req: req, Runtime: run, Estimate: j.Estimate}
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
	h.Recorded = summarize(recorded, nil, h.Prepared.TotalSlots)
	h.Recorded.Cycles = int(st.Cycles)
	h.Workload.Header = swf.Header{MaxNodes: int64(len(c.Hosts)), MaxProcs: int64(h.Prepared.TotalSlots), UnixStartTime: origin,
		Comments: []string{"The job history of a live xce server (xce sim --from-data)."}}
	return h, nil
}

func seconds(ns int64) int64 { return ns / 1_000_000_000 }

func estimateOrUnknown(s int64) int64 {
	if s <= 0 {
		return -1
	}
	return s
}
