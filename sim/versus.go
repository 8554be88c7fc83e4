package sim

import (
	"math"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Ran is one job as it really ran (from accounting records): times in
// seconds on the replay's clock, and the slots (CPUs) it held.
type Ran struct {
	ID                 cluster.JobID // the job's ID, as in the replay
	Submit, Start, End int64         // seconds
	Slots              int           // CPUs held
}

// Versus is a replay beside what really happened to the same jobs
// (docs/slurm.md, "Comparing with Slurm"): the metrics of docs/metrics.md
// over the jobs that ran in both, each side's, and how they differ.
type Versus struct {
	// Jobs is the number of jobs compared: recorded as run and completed
	// in the replay. Missing are the recorded jobs the replay did not
	// complete (rejected, or still pending at its end).
	Jobs    int `json:"jobs"`    // compared
	Missing int `json:"missing"` // recorded, not completed in the replay
	// Real and Sim are the metrics of the recorded run and of the
	// replay, over the same jobs.
	Real Summary `json:"real"` // the recorded run's
	Sim  Summary `json:"sim"`  // the replay's
	// WaitMeanDiff and BSLDMeanDiff are (Sim − Real) / Real of the mean
	// wait and the mean bounded slowdown (0 when Real's is 0).
	WaitMeanDiff float64 `json:"wait_mean_diff"` // of the mean wait
	BSLDMeanDiff float64 `json:"bsld_mean_diff"` // of the mean bounded slowdown
	// KendallTau is Kendall's τ_b between the jobs' recorded and
	// replayed start times (KendallTau): 1 when they start in the same
	// order, −1 in the reverse; 0 when it is undefined (fewer than two
	// jobs, or every start the same).
	KendallTau float64 `json:"kendall_tau"`
}

// Compare puts the finished jobs of a replay beside ran, what really
// happened to them, on a cluster of totalSlots slots.
func Compare(jobs []*framework.Job, ran []Ran, totalSlots int) Versus {
	byID := make(map[cluster.JobID]*framework.Job, len(jobs))
	for _, j := range jobs {
		byID[j.Spec.ID] = j
	}
	var v Versus
	var real, sim []*framework.Job
	var xs, ys []int64
	for _, r := range ran {
		j := byID[r.ID]
		if j == nil || j.State != framework.Done {
			v.Missing++
			continue
		}
		real = append(real, &framework.Job{Spec: &cluster.Job{ID: r.ID, Submit: r.Submit}, State: framework.Done,
			Start: r.Start, End: r.End, Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Slots: r.Slots}}}})
		sim = append(sim, j)
		xs, ys = append(xs, r.Start), append(ys, j.Start)
	}
	v.Jobs = len(real)
	v.Real = summarize(real, nil, totalSlots, Tau)
	v.Sim = summarize(sim, nil, totalSlots, Tau)
	v.WaitMeanDiff = relDiff(v.Sim.WaitMeanS, v.Real.WaitMeanS)
	v.BSLDMeanDiff = relDiff(v.Sim.BSLDMean, v.Real.BSLDMean)
	if tau := KendallTau(xs, ys); !math.IsNaN(tau) {
		v.KendallTau = tau
	}
	return v
}

func relDiff(sim, real float64) float64 {
	if real == 0 {
		return 0
	}
	return (sim - real) / real
}
