package cluster

// PreemptAction is what preemption does to a job of a preemptable queue
// (docs/preemption.md).
type PreemptAction uint8

const (
	// PreemptSuspend stops the job (SIGSTOP) where it runs: it keeps its
	// memory (the host resource named "mem") and gives back everything else
	// until it resumes (SIGCONT) on the same hosts. LSF's default.
	PreemptSuspend PreemptAction = iota
	// PreemptRequeue kills the job and puts it back to pending, with its
	// submit time, to run again from the start.
	PreemptRequeue
)

// String returns the configuration spelling: "suspend" or "requeue".
func (a PreemptAction) String() string {
	if a == PreemptRequeue {
		return "requeue"
	}
	return "suspend"
}

// MayPreempt reports whether a pending job of queue q may take what a
// running job of queue v holds (v is among q's preemptive queues).
func (c *Cluster) MayPreempt(q, v QueueID) bool {
	for _, x := range c.Queues[q].Preemptive {
		if x == v {
			return true
		}
	}
	return false
}

// preemptiveItem is a queue's preemptive list as read, resolved once every
// queue is known.
type preemptiveItem struct {
	queue QueueID
	fs    *fieldSet
}

// loadPreemption reads each queue's preempt_action and, once every queue
// is known, its preemptive list: the queues whose running jobs its pending
// jobs may preempt (LSF's PREEMPTION = PREEMPTIVE[low] in lsb.queues). A
// listed queue must exist, differ from the queue itself and have a lower
// priority, as LSF requires, so that no two queues preempt each other.
func (l *loader) loadPreemption(items []preemptiveItem) error {
	c := l.c
	for _, it := range items {
		q := &c.Queues[it.queue]
		action, err := l.enumField(it.fs, "preempt_action", "suspend", "suspend", "requeue")
		if err != nil {
			return err
		}
		if action == "requeue" {
			q.PreemptAction = PreemptRequeue
		}
		e, ok := it.fs.m["preemptive"]
		if !ok || !l.has(it.fs, "preemptive") {
			continue
		}
		names, n, err := l.nameList(e.val, e.path, "queue", l.queueExists, "")
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return l.errAt(n, e.path, "must not be empty (leave it out for a queue that preempts nothing)")
		}
		nodes, _, err := l.sequence(e.val, e.path)
		if err != nil {
			return err
		}
		for k, name := range names {
			v := l.queueIDs[name]
			at := nodes[k] // nameList refuses repeats: names[k] is item k
			switch {
			case v == it.queue:
				return l.errAt(at, indexPath(e.path, k), "a queue cannot preempt itself")
			case c.Queues[v].Priority >= q.Priority:
				return l.errAt(at, indexPath(e.path, k), "queue %s has priority %d, not lower than %s's %d: a queue preempts only queues of lower priority",
					quoteValue(name), c.Queues[v].Priority, quoteValue(q.Name), q.Priority)
			}
			q.Preemptive = append(q.Preemptive, v)
		}
	}
	return nil
}
