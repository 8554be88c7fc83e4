package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/parjob"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// genCluster draws a small cluster with a mem consumable and one license.
func genCluster(t *rapid.T) ct.Spec {
	n := rapid.IntRange(1, 6).Draw(t, "hosts")
	spec := ct.Spec{Shared: []cluster.Shared{{Name: "lic", Total: float64(rapid.IntRange(0, 3).Draw(t, "lic"))}}}
	for i := range n {
		st := cluster.HostOK
		if rapid.IntRange(0, 5).Draw(t, "closed") == 0 {
			st = cluster.HostClosed
		}
		spec.Hosts = append(spec.Hosts, ct.Host{
			Name:   fmt.Sprintf("h%d", i),
			Slots:  rapid.IntRange(1, 8).Draw(t, "slots"),
			Mem:    float64(rapid.IntRange(0, 8).Draw(t, "mem")),
			Type:   rapid.SampledFrom([]string{"A", "B"}).Draw(t, "type"),
			Status: st,
		})
	}
	return spec
}

// genResReq draws a resource requirement over the genCluster attributes.
func genResReq(t *rapid.T) string {
	parts := []string{
		"", "select[type==A]", "select[mem>=2]", "rusage[mem=1]", "rusage[mem=2]", "rusage[lic=1]",
		"span[hosts=1]", "span[ptile=2]", "span[ptile=3]", "same[type]", "order[-slots]",
		"rusage[mem=1] span[ptile=2]", "select[type==B] rusage[lic=1] span[hosts=1]",
		"2*{select[type==A]} + {rusage[mem=1]}", "{span[hosts=1]} || {span[ptile=1]}",
	}
	return rapid.SampledFrom(parts).Draw(t, "resreq")
}

// world is a runner over a generated cluster plus the allocations it made,
// kept to recompute every counter from scratch.
type world struct {
	c       *cluster.Cluster
	st      *cluster.State
	r       *runtime.Runner
	seq     *seqjob.Plugin
	par     *parjob.Plugin
	running []*framework.Job
	log     []string // decisions, for the determinism check
}

func newWorld(spec ct.Spec, fail *failCommitter) *world {
	c := ct.Build(spec)
	st := cluster.NewState(c)
	var committer framework.Committer = runtime.NewMemCommitter()
	if fail != nil {
		fail.inner = committer
		committer = fail
	}
	return &world{c: c, st: st, r: runtime.NewRunner(st, committer), seq: seqjob.New(), par: parjob.New()}
}

// allocate compiles and places one job; compile failures are skipped.
func (w *world) allocate(t *rapid.T, id int, min, max int, rr string) {
	job := w.job(id, min, max, rr)
	if job == nil {
		return
	}
	before := w.st.Clone()
	a := framework.Allocator(w.par)
	if seqjob.Handles(job) {
		a = w.seq
	}
	placed, err := w.r.Allocate(job, a)
	if err != nil {
		t.Fatalf("allocate: %v", err)
	}
	if !placed {
		if !w.st.Equal(before) {
			t.Fatalf("job %d (%q) pended but changed the state", id, rr)
		}
		w.log = append(w.log, fmt.Sprintf("%d PEND %v", id, job.Reasons.Main))
		return
	}
	w.running = append(w.running, job)
	w.log = append(w.log, fmt.Sprintf("%d RUN %v", id, job.Alloc.Hosts))
}

func (w *world) job(id, min, max int, rr string) *framework.Job {
	c := ct.Build(ct.Spec{Jobs: []ct.Job{{ID: cluster.JobID(id), Min: min, Max: max, ResReq: rr}}})
	spec := c.Jobs[0]
	req, err := framework.Compile(spec.Req, w.c, spec.TasksMin, spec.TasksMax)
	if err != nil {
		return nil
	}
	return &framework.Job{Spec: &spec, Req: req}
}

// audit recomputes every free counter from the cluster's totals and the
// running allocations, and compares with the state.
func (w *world) audit(t *rapid.T) {
	if err := w.st.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	want := cluster.NewState(w.c)
	for _, j := range w.running {
		if err := want.Fits(j.Alloc); err != nil {
			t.Fatalf("running jobs over-commit: %v", err)
		}
		want.Take(j.Alloc)
	}
	if !want.Equal(w.st) {
		t.Fatal("state differs from the sum of running allocations")
	}
}

// TestPropertyNoOverCommit: over random sequences of allocate and release,
// no slot, consumable or shared resource is ever over-committed, a failed
// attempt leaves the state deep-equal to before, and the state always
// equals the totals minus the running allocations.
func TestPropertyNoOverCommit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(genCluster(t), nil)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := range steps {
			if len(w.running) > 0 && rapid.IntRange(0, 3).Draw(t, "release") == 0 {
				k := rapid.IntRange(0, len(w.running)-1).Draw(t, "which")
				w.r.Release(w.running[k])
				w.running = append(w.running[:k], w.running[k+1:]...)
			} else {
				min := rapid.IntRange(1, 6).Draw(t, "min")
				max := rapid.IntRange(min, 8).Draw(t, "max")
				w.allocate(t, i, min, max, genResReq(t))
			}
			w.audit(t)
		}
	})
}

// TestPropertyDeterministic: the same cluster and the same sequence of
// jobs give the same decisions.
func TestPropertyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genCluster(t)
		type op struct {
			min, max int
			rr       string
		}
		ops := make([]op, rapid.IntRange(1, 20).Draw(t, "jobs"))
		for i := range ops {
			ops[i].min = rapid.IntRange(1, 6).Draw(t, "min")
			ops[i].max = rapid.IntRange(ops[i].min, 8).Draw(t, "max")
			ops[i].rr = genResReq(t)
		}
		var logs [2][]string
		for k := range logs {
			w := newWorld(spec, nil)
			for i, o := range ops {
				w.allocate(t, i, o.min, o.max, o.rr)
			}
			logs[k] = w.log
		}
		if fmt.Sprint(logs[0]) != fmt.Sprint(logs[1]) {
			t.Fatalf("decisions differ:\n%v\n%v", logs[0], logs[1])
		}
	})
}

// failCommitter fails the k-th write (PutHost, PutShared or Commit) of
// every transaction, counting from 1.
type failCommitter struct {
	inner  framework.Committer
	k      int
	writes int
	whole  bool // offer framework.AllocTxn: one write for the allocation
}

var errInjected = errors.New("injected commit failure")

func (f *failCommitter) Begin(job *framework.Job) framework.Txn {
	f.writes = 0
	x := &failTxn{f: f, inner: f.inner.Begin(job)}
	if f.whole {
		return &failAllocTxn{x}
	}
	return x
}

type failAllocTxn struct{ *failTxn }

func (x *failAllocTxn) PutAlloc(a *cluster.JobAlloc) error {
	if err := x.write(); err != nil {
		return err
	}
	return x.inner.(framework.AllocTxn).PutAlloc(a)
}

type failTxn struct {
	f     *failCommitter
	inner framework.Txn
}

func (x *failTxn) write() error {
	x.f.writes++
	if x.f.writes == x.f.k {
		return errInjected
	}
	return nil
}

func (x *failTxn) PutHost(a cluster.HostAlloc) error {
	if err := x.write(); err != nil {
		return err
	}
	return x.inner.PutHost(a)
}

func (x *failTxn) PutShared(a cluster.SharedAmount) error {
	if err := x.write(); err != nil {
		return err
	}
	return x.inner.PutShared(a)
}

func (x *failTxn) Commit() error {
	if err := x.write(); err != nil {
		return err
	}
	return x.inner.Commit()
}

func (x *failTxn) Abort() { x.inner.Abort() }

// TestCommitFaultInjection: a committer failing at its k-th write, for
// every k of a job on three hosts with a license and a GPU on each host
// (3 host writes, 1 shared write, the commit), leaves the state
// deep-equal to before (its held devices included), publishes no
// allocation and returns the error; with no failure the job is placed,
// holding device 0 of each host.
//
// Through framework.AllocTxn the same job takes two writes (the
// allocation, the commit), and the same holds for each.
func TestCommitFaultInjection(t *testing.T) {
	t.Run("per host", func(t *testing.T) { testCommitFaults(t, false, 5) })
	t.Run("whole allocation", func(t *testing.T) { testCommitFaults(t, true, 2) })
}

func testCommitFaults(t *testing.T, whole bool, writes int) {
	spec := ct.Spec{
		Hosts:  []ct.Host{{Name: "a", Slots: 2, Mem: 8, GPUs: 2}, {Name: "b", Slots: 2, Mem: 8, GPUs: 2}, {Name: "c", Slots: 2, Mem: 8, GPUs: 2}},
		Shared: []cluster.Shared{{Name: "lic", Total: 1}},
	}
	for k := 1; k <= writes+1; k++ {
		f := &failCommitter{k: k, whole: whole}
		c := ct.Build(spec)
		st := cluster.NewState(c)
		inner := runtime.NewMemCommitter()
		f.inner = inner
		r := runtime.NewRunner(st, f)
		jc := ct.Build(ct.Spec{Jobs: []ct.Job{{ID: 7, Min: 6, ResReq: "rusage[mem=3:lic=1:ngpus_physical=1] span[ptile=2]"}}})
		req, err := framework.Compile(jc.Jobs[0].Req, c, 6, 6)
		if err != nil {
			t.Fatal(err)
		}
		job := &framework.Job{Spec: &jc.Jobs[0], Req: req}
		before := st.Clone()
		placed, err := r.Allocate(job, parjob.New())
		if k <= writes {
			if !errors.Is(err, errInjected) || placed {
				t.Fatalf("k=%d: placed=%v err=%v, want the injected error", k, placed, err)
			}
			if !st.Equal(before) || job.Alloc != nil || job.State != framework.Pending || inner.Len() != 0 {
				t.Fatalf("k=%d: state or job changed after a failed commit", k)
			}
			continue
		}
		if err != nil || !placed || inner.Len() != 1 || st.FreeSlots(0)+st.FreeSlots(1)+st.FreeSlots(2) != 0 || st.SharedFree(0) != 0 {
			t.Fatalf("k=%d (no failure): placed=%v err=%v", k, placed, err)
		}
		if f.writes != writes {
			t.Fatalf("the job took %d writes, the test assumes %d", f.writes, writes)
		}
		for _, h := range job.Alloc.Hosts {
			if !slices.Equal(h.GPUs.List(), []int{0}) || st.HeldGPUs(h.Host) != 1 {
				t.Fatalf("host %d: devices %v, held %b", h.Host, h.GPUs, st.HeldGPUs(h.Host))
			}
		}
	}
}
