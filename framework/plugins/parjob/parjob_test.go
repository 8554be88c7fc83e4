package parjob

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	ct "github.com/xce-sched/xce/internal/clustertest"
	"github.com/xce-sched/xce/resreq"
)

// TestPropertyLargestFirst: for a job without span[] on a queue of every
// host, the first plan's buckets are what a plain scan of every host gives
// (each usable host's capacity — free slots bounded by free mem over the
// per-slot mem — sorted largest first, the last bucket taking the rest),
// whatever the free-slot levels the allocator reads them from; with no
// plan when the capacities add up to less than the job's tasks. Both
// sizing paths are checked: the scan of small clusters and the free-slot
// levels of large ones. Half the time a Bounder (a preparer such as a
// per-host limit) caps each host and the job's total: a host's capacity is
// then also at most its cap, and the job gets no plan when it needs more
// than the total allows.
func TestPropertyLargestFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nh := rapid.IntRange(1, 60).Draw(t, "hosts")
		spec := ct.Spec{MemMethod: cluster.PerTask} // the capacities below are per task
		for i := range nh {
			h := ct.Host{Name: fmt.Sprintf("h%d", i), Slots: rapid.IntRange(1, 40).Draw(t, "slots"),
				Mem: float64(rapid.IntRange(0, 16).Draw(t, "mem") * 1000), Type: rapid.SampledFrom([]string{"A", "B"}).Draw(t, "type")}
			if rapid.IntRange(0, 9).Draw(t, "closed") == 0 {
				h.Status = cluster.HostClosed
			}
			spec.Hosts = append(spec.Hosts, h)
		}
		c := ct.Build(spec)
		st := cluster.NewState(c)
		free := make([]int, nh)
		mem := make([]float64, nh)
		for i, h := range spec.Hosts {
			free[i], mem[i] = h.Slots, h.Mem
		}
		use := func() {
			for range rapid.IntRange(0, 2*nh).Draw(t, "uses") {
				h := rapid.IntRange(0, nh-1).Draw(t, "host")
				if free[h] == 0 {
					continue
				}
				a := cluster.HostAlloc{Host: cluster.HostID(h), Slots: rapid.IntRange(1, free[h]).Draw(t, "used"),
					Res: []cluster.ResAmount{{Res: 0, Amount: math.Floor(mem[h] * rapid.Float64Range(0, 1).Draw(t, "memused"))}}}
				st.Reserve(&a)
				free[h] -= a.Slots
				mem[h] -= a.Res[0].Amount
			}
		}
		use()
		st.HostsAtFreeLevel(0) // build the index, then change the state under it
		use()

		perSlot := rapid.SampledFrom([]float64{0, 500, 1000, 3000}).Draw(t, "perslot")
		onlyA := rapid.Bool().Draw(t, "onlyA")
		rr := ""
		if onlyA {
			rr = "select[type==A] "
		}
		if perSlot > 0 {
			rr += fmt.Sprintf("rusage[mem=%v]", perSlot)
		}
		var bounders []framework.Bounder
		bound := capBounder{total: math.MaxInt}
		if rapid.Bool().Draw(t, "bounded") {
			for range nh {
				bound.caps = append(bound.caps, rapid.IntRange(0, 40).Draw(t, "cap"))
			}
			bound.perHost = slices.Max(bound.caps)
			bound.total = rapid.IntRange(0, 400).Draw(t, "total")
			bounders = append(bounders, bound)
		}
		// The oracle: every host's capacity, by hand.
		var caps []int
		totalCap := 0
		for i, h := range spec.Hosts {
			if h.Status != cluster.HostOK || onlyA && h.Type != "A" {
				continue
			}
			capa := free[i]
			if perSlot > 0 {
				capa = min(capa, int(math.Floor(mem[i]/perSlot+1e-9)))
			}
			if bound.caps != nil {
				capa = min(capa, bound.caps[i])
			}
			if capa > 0 {
				caps = append(caps, capa)
				totalCap += capa
			}
		}
		n := rapid.IntRange(1, totalCap+3).Draw(t, "tasks")
		var want []int
		slices.SortFunc(caps, func(a, b int) int { return b - a })
		for left := n; left > 0 && n <= min(totalCap, bound.total); {
			take := min(caps[0], left)
			want = append(want, take)
			left -= take
			caps = caps[1:]
		}

		parsed, err := resreq.Parse(rr)
		if err != nil {
			t.Fatal(err)
		}
		req, err := framework.Compile(parsed, c, n, n)
		if err != nil {
			t.Fatal(err)
		}
		job := &framework.Job{Spec: &cluster.Job{TasksMin: n, TasksMax: n}, Req: req}
		// The same buckets whether the plugin scans the hosts (a small
		// cluster) or reads the free-slot levels (as from 1,024 hosts).
		for _, p := range []*Plugin{New(), {indexFrom: 0}} {
			it, err := p.Plans(job, &framework.View{Cluster: c, State: st, Bounders: bounders})
			if err != nil {
				t.Fatal(err)
			}
			plan, ok := it.Next()
			var got []int
			if ok {
				for _, b := range plan.Buckets {
					for range b.Hosts() {
						got = append(got, b.Slots)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q, %d tasks, index from %d hosts: buckets %v, want %v", rr, n, p.indexFrom, got, want)
			}
		}
	})
}

// capBounder bounds each host by caps[h] and the job by total.
type capBounder struct {
	caps           []int
	perHost, total int
}

func (b capBounder) HostBound(_ *framework.Job, _ *framework.Alternative, _ *framework.Term, h cluster.HostID, _ *framework.View) (int, int32) {
	return b.caps[h], -1
}

func (b capBounder) JobBound(*framework.Job, *framework.Alternative, *framework.Term, *framework.View) (int, int, int32) {
	return b.total, b.perHost, -1
}
