package runtime

import (
	"slices"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"pgregory.net/rapid"
)

// TestPropertyPendIndex: a pendIndex answers next as a scan of a plain
// list of (job, a, b) in order would, through appends, key changes,
// removals, compactions and resets, and keeps fresh at the first job
// appended since it was set, whatever the renumbering.
func TestPropertyPendIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type entry struct {
			job  *framework.Job
			a, b int32
		}
		var x pendIndex
		var want []entry // the live jobs, in order
		fresh := 0       // want[fresh:] were appended since fresh was set
		key := rapid.SampledFrom([]int32{keyAlways, 0, 1, 2, 3, 5, 8, keyNone})
		id := 0
		pos := func(j *framework.Job) int {
			for p, k := range x.jobs {
				if k == j {
					return p
				}
			}
			t.Fatalf("job %d is not in the index", j.Spec.ID)
			return -1
		}
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op < 4:
				id++
				e := entry{&framework.Job{Spec: &cluster.Job{ID: cluster.JobID(id)}}, key.Draw(t, "a"), key.Draw(t, "b")}
				x.add(e.job, e.a, e.b)
				want = append(want, e)
			case op < 6 && len(want) > 0:
				i := rapid.IntRange(0, len(want)-1).Draw(t, "set")
				want[i].a, want[i].b = key.Draw(t, "a"), key.Draw(t, "b")
				x.set(pos(want[i].job), want[i].a, want[i].b)
			case op < 8 && len(want) > 0:
				i := rapid.IntRange(0, len(want)-1).Draw(t, "remove")
				x.remove(pos(want[i].job))
				want = append(want[:i], want[i+1:]...)
				if i < fresh {
					fresh--
				}
			case op == 8:
				x.compact()
			default:
				if rapid.Bool().Draw(t, "reset") {
					x.reset()
					want, fresh = want[:0], 0
				} else {
					x.fresh, fresh = len(x.jobs), len(want)
				}
			}
			if x.live != len(want) {
				t.Fatalf("live = %d, want %d", x.live, len(want))
			}
			// fresh: the jobs before it are want[:fresh].
			n := 0
			for _, j := range x.jobs[:x.fresh] {
				if j != nil {
					n++
				}
			}
			if n != fresh {
				t.Fatalf("%d jobs before fresh, want %d", n, fresh)
			}
			// next, from every position, for some thresholds.
			threshold := rapid.SampledFrom([]int32{keyAlways, 0, 1, 2, 3, 5, 8, keyAll})
			fa, fb := threshold.Draw(t, "fa"), threshold.Draw(t, "fb")
			for from := 0; from <= len(x.jobs); from++ {
				wantJob := (*framework.Job)(nil)
				for p := from; p < len(x.jobs); p++ {
					if j := x.jobs[p]; j != nil {
						i := slices.IndexFunc(want, func(e entry) bool { return e.job == j })
						if want[i].a <= fa || want[i].b <= fb {
							wantJob = j
							break
						}
					}
				}
				got := x.next(from, fa, fb)
				switch {
				case wantJob == nil && got != -1:
					t.Fatalf("next(%d, %d, %d) = %d, want -1", from, fa, fb, got)
				case wantJob != nil && (got < 0 || x.jobs[got] != wantJob):
					t.Fatalf("next(%d, %d, %d) = %d, want job %d", from, fa, fb, got, wantJob.Spec.ID)
				}
			}
			// The live jobs are want, in order.
			k := 0
			for _, j := range x.jobs {
				if j != nil {
					if k >= len(want) || want[k].job != j {
						t.Fatalf("the index's jobs are not in the order they were added")
					}
					k++
				}
			}
		}
	})
}
