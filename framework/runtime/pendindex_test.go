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
			job *framework.Job
			k   keys
		}
		var x pendIndex
		var want []entry // the live jobs, in order
		fresh := 0       // want[fresh:] were appended since fresh was set
		key := drawKeys()
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
				e := entry{&framework.Job{Spec: &cluster.Job{ID: cluster.JobID(id)}}, key.Draw(t, "keys")}
				x.add(e.job, jobSize{tasks: int32(id)}, e.k)
				want = append(want, e)
			case op < 6 && len(want) > 0:
				i := rapid.IntRange(0, len(want)-1).Draw(t, "set")
				want[i].k = key.Draw(t, "keys")
				x.set(pos(want[i].job), want[i].k)
			case op < 8 && len(want) > 0:
				i := rapid.IntRange(0, len(want)-1).Draw(t, "remove")
				p := pos(want[i].job)
				x.removeLeaf(p)
				x.fix([]int{p})
				want = append(want[:i], want[i+1:]...)
				if i < fresh {
					fresh--
				}
			case op == 8 && len(want) > 0:
				// A cycle's changes: leaves set and removed, then fix.
				var dirty []int
				for range rapid.IntRange(1, 8).Draw(t, "changes") {
					if len(want) == 0 {
						break
					}
					i := rapid.IntRange(0, len(want)-1).Draw(t, "change")
					p := pos(want[i].job)
					dirty = append(dirty, p)
					if rapid.Bool().Draw(t, "gone") {
						x.removeLeaf(p)
						want = append(want[:i], want[i+1:]...)
						if i < fresh {
							fresh--
						}
					} else {
						want[i].k = key.Draw(t, "keys")
						x.setLeaf(p, want[i].k)
					}
				}
				slices.Sort(dirty)
				x.fix(dirty)
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
			l := drawLimits().Draw(t, "limits")
			for from := 0; from <= len(x.jobs); from++ {
				wantJob := (*framework.Job)(nil)
				for p := from; p < len(x.jobs); p++ {
					if j := x.jobs[p]; j != nil {
						i := slices.IndexFunc(want, func(e entry) bool { return e.job == j })
						if l.takes(&want[i].k) {
							wantJob = j
							break
						}
					}
				}
				got := x.next(from, &l)
				switch {
				case wantJob == nil && got != -1:
					t.Fatalf("next(%d, %+v) = %d, want -1", from, l, got)
				case wantJob != nil && (got < 0 || x.jobs[got] != wantJob):
					t.Fatalf("next(%d, %+v) = %d, want job %d", from, l, got, wantJob.Spec.ID)
				}
			}
			// The live jobs are want, in order, each with its size.
			k := 0
			for p, j := range x.jobs {
				if j != nil {
					if k >= len(want) || want[k].job != j {
						t.Fatalf("the index's jobs are not in the order they were added")
					}
					if x.sizes[p].tasks != int32(j.Spec.ID) {
						t.Fatalf("job %d has the size of job %d", j.Spec.ID, x.sizes[p].tasks)
					}
					k++
				}
			}
			if op := rapid.IntRange(0, 9).Draw(t, "compact"); op == 0 {
				x.compact()
			}
		}
	})
}

// small are the values keys and limits are drawn from: the special ones
// and a few on either side of each other.
var small = []int32{-1, 0, 1, 2, 3, 5, 8, keyAll}

// drawKeys draws the keys of a job of one of the kinds keyOf makes.
func drawKeys() *rapid.Generator[keys] {
	return rapid.Custom(func(t *rapid.T) keys {
		k := noKeys
		v := rapid.SampledFrom(small[:len(small)-1])
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			k.a = v.Draw(t, "a")
		case 1:
			k.b = v.Draw(t, "b")
		case 2:
			n := v.Draw(t, "need")
			k.needMin, k.needMax, k.est = n, max(n, v.Draw(t, "tasks")), v.Draw(t, "est")
		}
		return k
	})
}

// drawLimits draws any limits.
func drawLimits() *rapid.Generator[limits] {
	v := rapid.SampledFrom(small)
	return rapid.Custom(func(t *rapid.T) limits {
		return limits{a: v.Draw(t, "a"), b: v.Draw(t, "b"), free: v.Draw(t, "free"), est: v.Draw(t, "est"), need: v.Draw(t, "need")}
	})
}

// TestPropertyKeysMerge: limits take a node whose keys merge two leaves'
// exactly when they take one of the leaves, and never a hole.
func TestPropertyKeysMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k, o, l := drawKeys().Draw(t, "k"), drawKeys().Draw(t, "o"), drawLimits().Draw(t, "limits")
		var m keys
		m.merge(&k, &o)
		if got, want := l.takes(&m), l.takes(&k) || l.takes(&o); got != want {
			t.Fatalf("takes(merge(%+v, %+v)) = %v, want %v", k, o, got, want)
		}
		if l.takes(&noKeys) {
			t.Fatalf("%+v takes a hole", l)
		}
		var h keys
		if h.merge(&k, &noKeys); h != k {
			t.Fatalf("merge(%+v, hole) = %+v", k, h)
		}
	})
}
