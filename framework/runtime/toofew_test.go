package runtime_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/sim"
)

// TestPropertyTooFewSlots: over random clusters, policies and jobs, most
// of them plain (any open host takes as many tasks as it has free slots),
// a replay decides and words every reason exactly as one whose runner
// tries every job in full: a job found too large for the free slots
// before its plans are asked for pends as the attempt would leave it.
func TestPropertyTooFewSlots(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genCluster(t)
		if rapid.Bool().Draw(t, "all open") {
			for i := range spec.Hosts {
				spec.Hosts[i].Status = cluster.HostOK
			}
		}
		policy := rapid.SampledFrom([]cluster.Policy{cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative}).Draw(t, "policy")
		spec.Queues = []cluster.Queue{{Name: "normal", Policy: policy}}
		for i := range rapid.IntRange(1, 30).Draw(t, "jobs") {
			min := rapid.IntRange(0, 12).Draw(t, "min")
			rr := ""
			if rapid.IntRange(0, 3).Draw(t, "plain") == 0 {
				rr = genResReq(t)
			}
			rt := int64(rapid.IntRange(1, 20).Draw(t, "runtime"))
			spec.Jobs = append(spec.Jobs, ct.Job{ID: cluster.JobID(i + 1), Submit: int64(rapid.IntRange(0, 30).Draw(t, "submit")),
				Min: min, Max: min + rapid.IntRange(-1, 3).Draw(t, "extra"), ResReq: rr,
				Runtime: rt, Estimate: rt + int64(rapid.IntRange(-2, 10).Draw(t, "over"))})
		}
		replay := func(inFull bool) string {
			s, err := runtime.New(ct.Build(spec), runtime.Options{Registry: plugins.NewInTreeRegistry(), SkipTooLarge: true})
			if err != nil {
				t.Fatal(err)
			}
			if inFull {
				runtime.TryInFull(s)
			}
			var b strings.Builder
			observe := func(e *sim.Event) {
				fmt.Fprintf(&b, "t=%d\n", e.Now)
				for _, j := range e.Considered {
					fmt.Fprintf(&b, " %d %v", j.Spec.ID, j.State)
					if j.State == framework.Running {
						fmt.Fprintf(&b, " %v\n", j.Alloc.Hosts)
						continue
					}
					fmt.Fprintf(&b, " %+v\n", j.Reasons)
				}
			}
			if _, err := sim.Run(context.Background(), s, sim.Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: observe}); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		if got, want := replay(false), replay(true); got != want {
			t.Fatalf("the replay differs from one that tries every job in full:\n%s\nin full:\n%s", got, want)
		}
	})
}
