//go:build linux

package launch

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestKillLeftover: a job's group (its leader and a grandchild that
// ignores SIGINT and SIGTERM) is killed by KillLeftover given the
// leader's pid and start time; with another start time (a pid reused by
// a stranger) nothing is signalled; after the job has ended, nothing is
// left to kill.
func TestKillLeftover(t *testing.T) {
	leakCheck(t)
	subreaper(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Script = `sh -c 'trap "" INT TERM; echo $$ > gc.tmp; mv gc.tmp gc.pid; exec sleep 300' &
wait
`
	p := startT(t, s)
	gc := record(t, readPID(t, filepath.Join(dir, "gc.pid"), startTimeout))
	t.Cleanup(gc.kill)
	start, err := ProcStart(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t, p.PID())
	if strconv.FormatUint(start, 10) != rec.start {
		t.Fatalf("ProcStart %d, /proc says %s", start, rec.start)
	}

	if sent, err := KillLeftover(p.PID(), start+1, margin); sent || err != nil {
		t.Fatalf("another start time: sent %v, err %v; want nothing sent", sent, err)
	}
	time.Sleep(100 * time.Millisecond)
	if !alive(p.PID()) || !alive(gc.pid) {
		t.Fatal("KillLeftover with another start time killed the job")
	}

	if sent, err := KillLeftover(p.PID(), start, margin); !sent || err != nil {
		t.Fatalf("KillLeftover: sent %v, err %v; want sent, no error", sent, err)
	}
	r := waitT(t, p, margin)
	if r.Signal != "SIGKILL" || r.Killed {
		t.Errorf("result %+v: want SIGKILL, not Killed (Kill was not called)", r)
	}
	gone(t, gc.pid, time.Now().Add(margin))
	checkReaped(t, p.PID())
	if sent, err := KillLeftover(p.PID(), start, margin); sent || err != nil {
		t.Errorf("after the end: sent %v, err %v; want nothing sent", sent, err)
	}
	if _, err := KillLeftover(1, 0, margin); err == nil {
		t.Error("KillLeftover(1): want an error")
	}
}
