package framework

import "github.com/xce-sched/xce/cluster"

// AllocRequest is what the runner asks of one candidate host: the job-level
// part (the job, the term, the shared needs of the alternative), the
// candidate's shape (NSlots tasks on NHosts hosts: the bucket being placed),
// and the per-host part, rebuilt for every candidate by the prepare fan-out.
// On a host class (cluster.Cluster.IsClass) the candidate is NHosts of its
// members taking one task each (NSlots == NHosts), and Host is their total.
type AllocRequest struct {
	Job    *Job
	Alt    *Alternative
	Term   *Term
	NSlots int
	NHosts int
	// Claims are the claims the plan already holds (earlier buckets), for
	// needs counted once per job (a limit's jobs, a shared resource).
	Claims []Claim
	// Host is the per-host request: slots and total consumables to reserve
	// on the candidate (per-slot rusage × NSlots), and the limit counters to
	// charge (what preparers add).
	Host HostRequest
}

// HostRequest is the per-host part of an AllocRequest.
type HostRequest struct {
	Slots    int
	Res      []cluster.ResAmount
	Counters []cluster.CounterAmount
}

// Reset empties the per-host request, keeping its buffers.
func (h *HostRequest) Reset() {
	h.Slots = 0
	h.Res = h.Res[:0]
	h.Counters = h.Counters[:0]
}

// Amount returns the request's total of resource r (0 when absent).
func (h *HostRequest) Amount(r cluster.ResID) float64 {
	for _, x := range h.Res {
		if x.Res == r {
			return x.Amount
		}
	}
	return 0
}

// Add adds amount of resource r to the request.
func (h *HostRequest) Add(r cluster.ResID, amount float64) {
	for i := range h.Res {
		if h.Res[i].Res == r {
			h.Res[i].Amount += amount
			return
		}
	}
	h.Res = append(h.Res, cluster.ResAmount{Res: r, Amount: amount})
}
