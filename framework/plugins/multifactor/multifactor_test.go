package multifactor

import (
	"math"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/resreq"
)

// micro is the configuration of the trace's cluster
// (../shared/traces/slurm-micro-cluster/slurm.conf, sacctmgr.script):
// 10 nodes of 12 CPUs; PriorityWeightAge=50000, Fairshare=50000,
// JobSize=200000, Partition=1000000, QOS=20000; PriorityMaxAge=0-5 (5 h),
// PriorityDecayHalfLife=0-4 (4 h), PriorityCalcPeriod 5 min (default);
// QOS normal 0 and supporters 100; accounts account0..2 with 100 shares.
func micro(t *testing.T) *cluster.Cluster {
	t.Helper()
	c := &cluster.Cluster{Queues: []cluster.Queue{{Name: "normal", Picker: Name, Policy: cluster.PolicyBackfill}}}
	for i := range 10 {
		c.Hosts = append(c.Hosts, cluster.Host{Name: string(rune('a' + i)), Slots: 12})
	}
	c.Slurm = &cluster.SlurmConfig{
		Partitions: []cluster.SlurmPartition{{Queue: "normal", JobFactor: 1, MaxTime: -1, DefaultTime: -1}},
		Priority: cluster.Multifactor{WeightAge: 50000, WeightFairshare: 50000, WeightJobSize: 200000,
			WeightPartition: 1000000, WeightQOS: 20000, MaxAge: 18000, DecayHalfLife: 14400, CalcPeriod: 300, DampeningFactor: 5},
		QOS: []cluster.SlurmQOS{{Name: "normal"}, {Name: "supporters", Priority: 100}},
		Accounts: []cluster.SlurmAccount{
			{Name: "account0", Shares: 100, Users: []cluster.UserShare{{User: "admin", Shares: 1}}},
			{Name: "account1", Shares: 100, Users: []cluster.UserShare{{User: "user1", Shares: 1}, {User: "user2", Shares: 1}}},
			{Name: "account2", Shares: 100, Users: []cluster.UserShare{{User: "user4", Shares: 1}}},
		},
	}
	if err := c.Init(); err != nil {
		t.Fatal(err)
	}
	return c
}

// job returns a pending job of tasks tasks at ptile per host.
func job(t *testing.T, id int64, submit int64, user, account, qos string, tasks, ptile int) *framework.Job {
	t.Helper()
	rr := ""
	if ptile > 0 {
		rr = "span[ptile=" + itoa(ptile) + "]"
	}
	req, err := resreq.Parse(rr)
	if err != nil {
		t.Fatal(err)
	}
	return &framework.Job{Spec: &cluster.Job{ID: cluster.JobID(id), Submit: submit, User: user, Project: account, QOS: qos,
		TasksMin: tasks, TasksMax: tasks, Req: req, Estimate: 1800}}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// TestPriorities pins priorities worked out by hand from the
// documented formula (priority_multifactor.html, "Job Priority Factors In
// General"), with no usage yet (every user's Fair Tree factor is 1: all
// tie at the top rank):
//
//	job size, 12 CPUs on 1 node:  (1/10 + 12/120)/2 = 0.1      → 20000
//	job size, 1 CPU on 1 node:    (1/10 + 1/120)/2  = 13/240   → 10833.33…
//	job size, 96 CPUs on 8 nodes: (8/10 + 96/120)/2 = 0.8      → 160000
//	partition: 1/1 → 1000000; QOS normal 0/100 → 0, supporters → 20000
//	fair-share: 1 → 50000
//	age at the calculation of 600 s, submitted at 0: 600/18000 → 1666.66…
func TestPriorities(t *testing.T) {
	c := micro(t)
	p := New(c, 0)
	for _, tc := range []struct {
		name string
		j    *framework.Job
		now  int64
		want uint32
	}{
		// 1666.66… + 50000 + 20000 + 1000000 = 1071666.66… → truncated
		{"12 CPUs, age 600 s", job(t, 1, 0, "user1", "account1", "normal", 12, 12), 600, 1071666},
		// The calculation of 600 s holds until 900: the same at 899.
		{"12 CPUs at 899 s (last calculation 600 s)", job(t, 1, 0, "user1", "account1", "normal", 12, 12), 899, 1071666},
		// At 900 s: 2500 + 50000 + 10833.33… + 1000000 + 20000 = 1083333.33…
		{"1 CPU, supporters, age 900 s", job(t, 2, 0, "user4", "account2", "supporters", 1, 1), 900, 1083333},
		// 160000 + 50000 + 1000000, submitted after the last calculation:
		// age 0 until the next one.
		{"96 CPUs on 8 nodes, just submitted", job(t, 3, 950, "user2", "account1", "", 96, 12), 1000, 1210000},
		// No span: 1 node; the age factor is 1 from 18000 s on:
		// 50000 + 50000 + 10833.33… + 1000000 + 0 (QOS normal).
		{"1 CPU, no span, age at 18000 s is 1", job(t, 4, 0, "admin", "account0", "normal", 1, 0), 36000, 1110833},
	} {
		if got := p.Factors(tc.j, tc.now).Priority; got != tc.want {
			t.Errorf("%s: priority %d; want %d (factors %+v)", tc.name, got, tc.want, p.Factors(tc.j, tc.now))
		}
	}
}

// TestFavorSmall: with PriorityFavorSmall=YES the 1-CPU job's size factor
// is ((10−1)/10 + (120−1)/120)/2 = 0.9 + ... = 227/240 → ×200000 =
// 189166.66…, and the 96-CPU job's ((10−8)/10 + (120−96)/120)/2 = 0.2 →
// 40000. SMALL_RELATIVE_TO_TIME: 12 CPUs for 30 minutes →
// 12/30/120 = 1/300 → 666.66…
func TestFavorSmall(t *testing.T) {
	c := micro(t)
	c.Slurm.Priority = cluster.Multifactor{WeightJobSize: 200000, MaxAge: 1, CalcPeriod: 0}
	c.Slurm.Priority.FavorSmall = true
	p := New(c, 0)
	if got := p.Factors(job(t, 1, 0, "u", "a", "", 1, 1), 0).Priority; got != 189166 {
		t.Errorf("1 CPU: %d; want 189166", got)
	}
	if got := p.Factors(job(t, 2, 0, "u", "a", "", 96, 12), 0).Priority; got != 40000 {
		t.Errorf("96 CPUs: %d; want 40000", got)
	}
	c.Slurm.Priority.FavorSmall = false
	c.Slurm.Priority.SmallRelativeToTime = true
	p = New(c, 0)
	if got := p.Factors(job(t, 3, 0, "u", "a", "", 12, 12), 0).Priority; got != 666 {
		t.Errorf("12 CPUs 30 min: %d; want 666", got)
	}
	// No weight at all: every priority is 1 (0 is for held jobs).
	c.Slurm.Priority = cluster.DefaultMultifactor()
	if got := New(c, 0).Factors(job(t, 4, 0, "u", "a", "", 12, 12), 100).Priority; got != 1 {
		t.Errorf("no weights: %d; want 1", got)
	}
}

// TestFairTreeUsage runs one job of user1 (12 CPUs, account1) from 0 to
// 300 s, then computes the Fair Tree factors at the calculation of 300 s
// by hand (fair_tree.html): root's children account0 (no usage: LF = +Inf),
// account1 (S = 1/3, U = 1: LF = 1/3) and account2 (+Inf). account0 and
// account2 tie and are merged: admin and user4 (both +Inf) share the top
// rank 4 of 4 user associations → 1.0. Then account1: user2 (no usage,
// +Inf) rank 2 → 0.5, user1 (S = 1/2, U = 1: 0.5) rank 1 → 0.25.
func TestFairTreeUsage(t *testing.T) {
	c := micro(t)
	p := New(c, 0)
	run := job(t, 10, 0, "user1", "account1", "", 12, 12)
	run.Alloc = &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 12}}}
	run.Start = 0
	p.JobStarted(run, 0)
	run.End = 300
	p.JobFinished(run, 300)
	for _, tc := range []struct {
		user, account string
		want          float64
	}{{"admin", "account0", 1}, {"user4", "account2", 1}, {"user2", "account1", 0.5}, {"user1", "account1", 0.25}} {
		if got := p.Factors(job(t, 1, 0, tc.user, tc.account, "", 1, 1), 300).Fairshare; got != tc.want {
			t.Errorf("%s: fair-share %v; want %v", tc.user, got, tc.want)
		}
	}
	// The usage: 12 CPUs × 300 s × df^300, df = 1 − 0.693/14400,
	// charged at the calculation of 300 s; decayed by df^300 at 600.
	df := 1 - 0.693/14400
	u := 12 * 300 * math.Pow(df, 300)
	if got := p.tree.nodes[p.tree.assoc("account1", "user1")].usage; math.Abs(got-u) > 1e-9 {
		t.Errorf("usage %v; want %v", got, u)
	}
	p.Factors(run, 600)
	if got := p.tree.nodes[0].usage; math.Abs(got-u*math.Pow(df, 300)) > 1e-9 {
		t.Errorf("root usage after decay %v; want %v", got, u*math.Pow(df, 300))
	}
}

// TestUsageWhileRunning: a running job is charged at every calculation
// for the time since the last one (or its start): started at 100,
// charged 12 × 200 × df^200 at 300 and, after the decay df^300,
// 12 × 300 × df^300 at 600.
func TestUsageWhileRunning(t *testing.T) {
	c := micro(t)
	p := New(c, 0)
	p.Factors(job(t, 1, 0, "u", "a", "", 1, 1), 0) // first calculation at 0
	run := job(t, 10, 0, "user4", "account2", "", 12, 12)
	run.Alloc = &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Host: 0, Slots: 12}}}
	run.Start = 100
	p.JobStarted(run, 100)
	p.Factors(run, 600)
	df := 1 - 0.693/14400
	want := 12*200*math.Pow(df, 200)*math.Pow(df, 300) + 12*300*math.Pow(df, 300)
	if got := p.tree.nodes[p.tree.assoc("account2", "user4")].usage; math.Abs(got-want) > 1e-9 {
		t.Errorf("usage %v; want %v", got, want)
	}
}

// TestOrder: priority first, then submit time, then job ID.
func TestOrder(t *testing.T) {
	c := micro(t)
	p := New(c, 0)
	a := job(t, 5, 0, "user1", "account1", "", 1, 1)   // small
	b := job(t, 4, 0, "user1", "account1", "", 96, 12) // large: first
	d := job(t, 3, 10, "user1", "account1", "", 1, 1)  // as a, submitted later
	e := job(t, 2, 0, "user1", "account1", "", 1, 1)   // as a, lower ID
	jobs := []*framework.Job{a, b, d, e}
	p.Order(0, jobs)
	var got []cluster.JobID
	for _, j := range jobs {
		got = append(got, j.Spec.ID)
	}
	if want := []cluster.JobID{4, 2, 5, 3}; !equal(got, want) {
		t.Errorf("order %v; want %v", got, want)
	}
}

func equal(a, b []cluster.JobID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
