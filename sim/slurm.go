package sim

import (
	"cmp"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/slurm"
	"github.com/xce-sched/xce/workload/swf"
)

// SlurmWorkload turns Slurm jobs (read by workload/sacct or
// workload/slurmsim) into a Workload to replay on cluster c (nil: a
// cluster without mem or GPUs, of hosts of one slot), by the rules of
// docs/slurm.md:
//
//   - times are counted from the earliest submit time, which the header
//     keeps as UnixStartTime when absolute (accounting records);
//   - each job keeps its recorded run time (slurm.Job.Runtime: a TIMEOUT
//     job keeps the time it ran past its limit); its task count is its
//     CPUs; its estimate its time limit, else its partition's
//     DefaultTime, else MaxTime, else its run time;
//   - its user, account (as project), partition (as queue, "" for the
//     first) and QOS are kept; its requirement is slurm.Job.ResReq on c,
//     with its partition's DefMemPerCPU or DefMemPerNode;
//   - a job whose time limit passes its partition's MaxTime is rejected
//     (Slurm refuses it at submission, EnforcePartLimits).
//
// file names the jobs' file in errors, which name the job's line.
func SlurmWorkload(jobs []slurm.Job, c *cluster.Cluster, file string, absolute bool) (*Workload, error) {
	w := &Workload{Header: swf.Header{UnixStartTime: -1}, Jobs: make([]swf.Job, 0, len(jobs)), Requests: make([]Request, 0, len(jobs)), File: file}
	if len(jobs) == 0 {
		return w, nil
	}
	t0 := jobs[0].Submit
	for _, j := range jobs {
		t0 = min(t0, j.Submit)
	}
	if absolute {
		w.Header.UnixStartTime = t0
	}
	t := slurm.Target{MaxSlots: 1}
	var sc *cluster.SlurmConfig
	first := ""
	if c != nil {
		t, sc = target(c), c.Slurm
		if len(c.Queues) > 0 {
			first = c.Queues[0].Name
		}
	}
	users := map[string]int64{}
	for _, j := range jobs {
		part, _ := sc.Partition(cmp.Or(j.Partition, first))
		jt := t
		switch {
		case part.DefMemPerCPU > 0:
			jt.DefMem = slurm.Memory{MB: part.DefMemPerCPU, Per: slurm.PerCPU}
		case part.DefMemPerNode > 0:
			jt.DefMem = slurm.Memory{MB: part.DefMemPerNode, Per: slurm.PerNode}
		}
		rr, err := j.ResReq(jt)
		if err != nil {
			return nil, slurm.Errorf(file, j.Line, "job %d: %w", j.ID, err)
		}
		limit := j.TimeLimit
		if limit <= 0 { // not given, or UNLIMITED: the partition's
			limit = -1
			switch {
			case part.DefaultTime > 0:
				limit = part.DefaultTime
			case part.MaxTime > 0:
				limit = part.MaxTime
			}
			j.TimeLimit = limit
		}
		uid, ok := users[j.User]
		if !ok {
			uid = int64(len(users) + 1)
			users[j.User] = uid
		}
		rec := swf.Job{ID: j.ID, Submit: j.Submit - t0, Wait: -1, Run: j.Runtime(), AllocProcs: -1, AvgCPU: -1, UsedMem: -1,
			ReqProcs: int64(max(j.CPUs, 1)), ReqTime: max(limit, -1), ReqMem: -1, Status: 1, User: uid, Group: -1,
			Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}
		w.Jobs = append(w.Jobs, rec)
		w.Slurm = append(w.Slurm, j)
		w.Requests = append(w.Requests, Request{User: j.User, Project: j.Account, QOS: j.QOS, Queue: j.Partition,
			ResReq: rr, Reject: part.MaxTime > 0 && limit > part.MaxTime, Line: j.Line})
	}
	return w, nil
}

// target says how c counts what a Slurm job asks for.
func target(c *cluster.Cluster) slurm.Target {
	t := slurm.Target{MaxSlots: 1}
	for _, h := range c.Hosts {
		t.MaxSlots = max(t.MaxSlots, h.MemberSlots())
	}
	if r, ok := c.ResourceByName("mem"); ok {
		t.Mem, t.MemPerTask = true, c.Reserve(r) == cluster.PerTask
	}
	if r, ok := c.ResourceByName(gpureq.Resource); ok {
		t.GPUs, t.GPUsPerTask = true, c.Reserve(r) == cluster.PerTask
	}
	return t
}
