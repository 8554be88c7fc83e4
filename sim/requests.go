package sim

import (
	"fmt"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/resreq"
)

// requests adds the jobs of a workload with Requests to p's cluster, as
// they ran: no cleaning; the task count is the requested processors (SWF
// field 8), the runtime field 4 (at least 0), the estimate the requested
// time (field 9), else the runtime. empty is the parsed empty
// requirement. An unknown queue or a requirement that does not parse is
// an error naming the file, the job's line and the job (Workload.at); so
// is passing the horizon (cluster.MaxTime).
func (p *Prepared) requests(w *Workload, empty *resreq.Requirement) error {
	c := p.Cluster
	if len(w.Requests) != len(w.Jobs) {
		return fmt.Errorf("%d requests for %d jobs", len(w.Requests), len(w.Jobs))
	}
	reqs := map[string]*resreq.Requirement{"": empty}
	var latest, total int64
	for i, j := range w.Jobs {
		r := w.Requests[i]
		at := w.at(i)
		q := cluster.QueueID(0)
		if r.Queue != "" {
			var ok bool
			if q, ok = c.QueueByName(r.Queue); !ok {
				return fmt.Errorf("%s: partition %q is not a queue of the cluster (queues: %s)", at, r.Queue, queueNames(c))
			}
		}
		req, ok := reqs[r.ResReq]
		if !ok {
			var err error
			if req, err = resreq.Parse(r.ResReq); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			reqs[r.ResReq] = req
		}
		if r.Reject {
			req = nil
		}
		run := max(j.Run, 0)
		latest = max(latest, j.Submit)
		if total += run; latest+total > cluster.MaxTime {
			return fmt.Errorf("%s: the latest submit time so far (%d s) plus the runtimes of the jobs up to it (%d s) exceed 10^15 s, the most a simulation may reach", at, latest, total)
		}
		est := j.ReqTime
		if est <= 0 {
			est = run
		}
		tasks := int(min(max(j.ReqProcs, 1), 1<<31-1))
		c.Jobs = append(c.Jobs, cluster.Job{
			ID: cluster.JobID(j.ID), User: orDefault(r.User, cluster.DefaultUser), Project: orDefault(r.Project, cluster.DefaultProject),
			QOS: r.QOS, Queue: q, Submit: max(j.Submit, 0), TasksMin: tasks, TasksMax: tasks,
			ResReq: r.ResReq, Req: req, Runtime: run, Estimate: est,
		})
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func queueNames(c *cluster.Cluster) string {
	var names []string
	for _, q := range c.Queues {
		names = append(names, q.Name)
	}
	return strings.Join(names, ", ")
}
