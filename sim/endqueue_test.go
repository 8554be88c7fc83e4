package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// TestEndQueueOrder checks that the end queue gives ends back by time,
// then job ID, whatever the order they were pushed in and however pushes
// and pops interleave.
func TestEndQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var q endQueue
		var in []end // pushed, not popped yet
		pop := func() {
			least := slices.MinFunc(in, byEnd)
			e := q.pop()
			if byEnd(e, least) != 0 {
				t.Fatalf("popped the end at %d of job %d, want the one at %d of job %d", e.at, e.job.Spec.ID, least.at, least.job.Spec.ID)
			}
			in = slices.DeleteFunc(in, func(x end) bool { return x.job == e.job })
		}
		for i := range 1 + rng.IntN(60) {
			// Few times, distinct job IDs: many ties on time.
			j := &framework.Job{Spec: &cluster.Job{ID: cluster.JobID(i*7%61 + 1)}}
			e := end{at: int64(rng.IntN(8)), job: j}
			q.push(e)
			in = append(in, e)
			if rng.IntN(4) == 0 {
				pop()
			}
		}
		for q.Len() > 0 {
			pop()
		}
		if len(in) != 0 {
			t.Fatalf("%d ends pushed were never popped", len(in))
		}
	}
}

func byEnd(a, b end) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.job.Spec.ID, b.job.Spec.ID))
}
