package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
)

// TestMemCommitter: the committer returns what was committed for each live
// job and nothing for removed ones, through enough commits and removals
// to compact its log several times; an aborted transaction leaves no record.
func TestMemCommitter(t *testing.T) {
	m := runtime.NewMemCommitter()
	commit := func(id cluster.JobID, host cluster.HostID, slots int) {
		txn := m.Begin(&framework.Job{Spec: &cluster.Job{ID: id}})
		if err := txn.PutHost(cluster.HostAlloc{Host: host, Slots: slots}); err != nil {
			t.Fatal(err)
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs 1..10000 start on host id%7 with id%5+1 slots; every job whose
	// ID is not a multiple of 3 ends right after the next one starts.
	for id := cluster.JobID(1); id <= 10000; id++ {
		commit(id, cluster.HostID(id%7), int(id%5)+1)
		if prev := id - 1; prev >= 1 && prev%3 != 0 {
			m.Remove(prev)
		}
	}
	txn := m.Begin(&framework.Job{Spec: &cluster.Job{ID: 20000}})
	_ = txn.PutHost(cluster.HostAlloc{Host: 1, Slots: 1})
	txn.Abort()
	// Live: the 3,333 multiples of 3 up to 9,999, and 10,000 (its removal
	// would come with job 10,001).
	if got := m.Len(); got != 3334 {
		t.Fatalf("Len = %d, want 3334", got)
	}
	for id := cluster.JobID(1); id <= 10000; id++ {
		a := m.Alloc(id)
		live := id%3 == 0 || id == 10000
		switch {
		case live && (a == nil || len(a.Hosts) != 1 || a.Hosts[0].Host != cluster.HostID(id%7) || a.Hosts[0].Slots != int(id%5)+1):
			t.Fatalf("job %d: alloc %+v, want host %d with %d slots", id, a, id%7, id%5+1)
		case !live && a != nil:
			t.Fatalf("job %d was removed, still has %+v", id, a)
		}
	}
	if m.Alloc(20000) != nil {
		t.Fatal("an aborted transaction left a record")
	}
}
