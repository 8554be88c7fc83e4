package sim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/workload/swf"
)

// This file holds the simulator's checks of extreme input (issue 11 §5).

// writeTrace writes an SWF file of a two-line header and one record per
// (id, submit, run) triple, 1 processor each: records start on line 3.
func writeTrace(t *testing.T, recs ...[3]int64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("; MaxNodes: 1\n; MaxProcs: 1\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "%d %d -1 %d 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n", r[0], r[1], r[2])
	}
	path := filepath.Join(t.TempDir(), "t.swf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadSWFDuplicate: a repeated job number is an error naming both
// lines (records on lines 3, 4, 5: ids 7, 9, 7); under skip-bad the repeat
// is skipped and counted, the first kept.
func TestReadSWFDuplicate(t *testing.T) {
	path := writeTrace(t, [3]int64{7, 0, 10}, [3]int64{9, 5, 10}, [3]int64{7, 8, 10})
	_, _, err := sim.ReadSWF(path, false)
	var pe *swf.ParseError
	if !errors.As(err, &pe) || pe.Line != 5 || pe.Field != 1 ||
		err.Error() != path+":5: field 1 (job number): duplicate job number 7 (first on line 3)" {
		t.Fatalf("got %v", err)
	}
	w, st, err := sim.ReadSWF(path, true)
	if err != nil || st.Skipped != 1 || len(w.Jobs) != 2 || w.Jobs[0].ID != 7 || w.Jobs[0].Submit != 0 || w.Jobs[1].ID != 9 {
		t.Fatalf("skip-bad: %+v %+v %v", w, st, err)
	}
}

// TestReadSWFOutOfOrder: submit times 0, 10, 5, 7, 20 on lines 3–7: the
// records on lines 5 (5 < 10) and 6 (7 < 10) are out of order; they are
// kept, and Prepare replays the jobs in submit order 0, 5, 7, 10, 20
// (ids 1, 3, 4, 2, 5).
func TestReadSWFOutOfOrder(t *testing.T) {
	path := writeTrace(t, [3]int64{1, 0, 1}, [3]int64{2, 10, 1}, [3]int64{3, 5, 1}, [3]int64{4, 7, 1}, [3]int64{5, 20, 1})
	w, st, err := sim.ReadSWF(path, false)
	if err != nil || len(w.Jobs) != 5 || st.OutOfOrder != 2 || st.Skipped != 0 {
		t.Fatalf("got %d jobs, %+v, %v", len(w.Jobs), st, err)
	}
	if got, want := st.FirstOutOfOrder.Error(), path+":5: field 2 (submit time): 5 is earlier than the submit time 10 on line 4"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	prep, err := sim.Prepare(w, sim.Setup{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []cluster.JobID
	for _, j := range prep.Cluster.Jobs {
		ids = append(ids, j.ID)
	}
	if fmt.Sprint(ids) != "[1 3 4 2 5]" {
		t.Errorf("replay order %v, want [1 3 4 2 5]", ids)
	}
}

// TestReadSWFHorizon: the latest submit time plus the run times may reach
// 10^15 s. 1,000 run times of 10^12 s, all submitted at 0, reach it
// exactly; a 1,001st (line 1003) passes it by 10^12 s; a record submitted
// at 10^15 s that runs 1 s (line 3) passes it by 1 s.
func TestReadSWFHorizon(t *testing.T) {
	recs := make([][3]int64, 1001)
	for i := range recs {
		recs[i] = [3]int64{int64(i + 1), 0, 1_000_000_000_000}
	}
	if w, _, err := sim.ReadSWF(writeTrace(t, recs[:1000]...), false); err != nil || len(w.Jobs) != 1000 {
		t.Fatalf("1000 records: %v", err)
	}
	for _, tc := range []struct {
		recs [][3]int64
		want string
	}{
		{recs, ":1003: the latest submit time so far (0 s) plus the run times up to this line (1001000000000000 s) exceed 10^15 s, the most a simulation may reach"},
		{[][3]int64{{1, 1_000_000_000_000_000, 1}}, ":3: the latest submit time so far (1000000000000000 s) plus the run times up to this line (1 s) exceed 10^15 s, the most a simulation may reach"},
	} {
		path := writeTrace(t, tc.recs...)
		for _, skip := range []bool{false, true} {
			if _, _, err := sim.ReadSWF(path, skip); err == nil || err.Error() != path+tc.want {
				t.Errorf("skip-bad %v: got %v\nwant %s", skip, err, path+tc.want)
			}
		}
	}
}

// TestReadSWFTimeRange: the values are rejected with the line and
// field: submit 2^63−1, run 2^62, run 2^63−1.
func TestReadSWFTimeRange(t *testing.T) {
	for _, tc := range []struct {
		rec  [3]int64
		want string
	}{
		{[3]int64{1, 9223372036854775807, 10}, `:3: field 2 (submit time): "9223372036854775807" is out of range (a time is at most 10^15 s)`},
		{[3]int64{1, 1 << 62, 1 << 62}, `:3: field 2 (submit time): "4611686018427387904" is out of range (a time is at most 10^15 s)`},
		{[3]int64{1, 0, 9223372036854775807}, `:3: field 4 (run time): "9223372036854775807" is out of range (a time is at most 10^15 s)`},
	} {
		path := writeTrace(t, tc.rec)
		if _, _, err := sim.ReadSWF(path, false); err == nil || err.Error() != path+tc.want {
			t.Errorf("%v: got %v, want %s", tc.rec, err, path+tc.want)
		}
	}
}

// TestPrepareChecks: a Workload built in code gets the same checks,
// naming the job number and the record.
func TestPrepareChecks(t *testing.T) {
	hdr := swf.Header{MaxNodes: 1, MaxProcs: 1, UnixStartTime: -1}
	thousand := make([]swf.Job, 1001)
	for i := range thousand {
		thousand[i] = rec(int64(i+1), 0, 1, 1_000_000_000_000, -1)
	}
	for _, tc := range []struct {
		name string
		jobs []swf.Job
		want string
	}{
		{"submit 2^62", []swf.Job{rec(1, 0, 1, 5, -1), rec(2, 1<<62, 1, 1<<62, -1)}, "job 2 (record 2): submit time 4611686018427387904 s is above 10^15 s"},
		{"run 2^63-1", []swf.Job{rec(1, 0, 1, 9223372036854775807, -1)}, "job 1 (record 1): run time 9223372036854775807 s is above 10^15 s"},
		{"requested 10^15+1", []swf.Job{rec(1, 0, 1, 5, 1_000_000_000_000_001)}, "job 1 (record 1): requested time 1000000000000001 s is above 10^15 s"},
		{"duplicate", []swf.Job{rec(3, 0, 1, 5, -1), rec(1, 0, 1, 5, -1), rec(3, 9, 1, 5, -1)}, "job 3 (record 3): job number 3 repeats (first as record 1)"},
		{"horizon", thousand, "job 1001 (record 1001): the latest submit time so far (0 s) plus the runtimes of the jobs up to it (1001000000000000 s) exceed 10^15 s, the most a simulation may reach"},
		{"horizon by the submit time", []swf.Job{rec(1, 0, 1, 10, -1), rec(2, 999_999_999_999_995, 1, 5, -1)},
			"job 2 (record 2): the latest submit time so far (999999999999995 s) plus the runtimes of the jobs up to it (15 s) exceed 10^15 s, the most a simulation may reach"},
	} {
		_, err := sim.Prepare(&sim.Workload{Header: hdr, Jobs: tc.jobs}, sim.Setup{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
}

// TestTimesAtTheBounds: 1,000 jobs on 1 host × 1 slot, all submitted at 0
// with run and requested time 10^12 s, so the horizon is exactly MaxTime
// (10^15 s), under conservative backfilling, which adds estimates to the
// clock. Worked by hand: they run one after another, job k from
// 10^12·(k−1) to 10^12·k; waits 10^12·(k−1), mean 10^12·499.5; makespan
// 10^15; utilization 1. The schedule, whose largest wait is 999·10^12 s,
// writes as SWF and reads back.
func TestTimesAtTheBounds(t *testing.T) {
	const e12 = 1_000_000_000_000
	jobs := make([]swf.Job, 1000)
	for i := range jobs {
		jobs[i] = rec(int64(i+1), 0, 1, e12, e12)
	}
	w := &sim.Workload{Header: swf.Header{MaxNodes: 1, MaxProcs: 1, UnixStartTime: -1}, Jobs: jobs}
	prep, err := sim.Prepare(w, sim.Setup{Policy: cluster.PolicyConservative, Clean: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _, sum, err := sim.Replay(context.Background(), prep, plugins.NewInTreeRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Jobs != 1000 || sum.MakespanS != 1000*e12 || sum.Utilization != 1 || sum.WaitMeanS != 499.5*e12 {
		t.Errorf("jobs %d makespan %d utilization %v wait mean %v", sum.Jobs, sum.MakespanS, sum.Utilization, sum.WaitMeanS)
	}
	for _, j := range s.Jobs {
		if k := int64(j.Spec.ID); j.Start != (k-1)*e12 || j.End != k*e12 {
			t.Fatalf("job %d ran [%d, %d), want [%d, %d)", k, j.Start, j.End, (k-1)*e12, k*e12)
		}
	}
	path := filepath.Join(t.TempDir(), "schedule.swf")
	if err := sim.WriteSchedule(path, s, w); err != nil {
		t.Fatal(err)
	}
	back, _, err := sim.ReadSWF(path, false)
	if err != nil || len(back.Jobs) != 1000 || back.Jobs[999].Wait != 999*e12 || back.Jobs[999].Run != e12 {
		t.Fatalf("schedule read back: %v", err)
	}
}

// TestMaxTimeAgrees: the SWF reader's bound is the cluster's.
func TestMaxTimeAgrees(t *testing.T) {
	if swf.MaxTime != cluster.MaxTime {
		t.Errorf("swf.MaxTime %d, cluster.MaxTime %d", int64(swf.MaxTime), int64(cluster.MaxTime))
	}
}

// TestPrepareUsers: a record's user number n is the user u<n>, the same
// name for every record of it, and "nobody" when the number is negative
// (unknown); large numbers are named as small ones.
func TestPrepareUsers(t *testing.T) {
	users := []int64{-1, 0, 7, 7, 70000, 3, -5}
	w := &sim.Workload{Header: swf.Header{MaxNodes: 1, MaxProcs: 1}}
	for i, u := range users {
		w.Jobs = append(w.Jobs, swf.Job{ID: int64(i + 1), Submit: int64(i), Run: 1, ReqProcs: 1, User: u})
	}
	prep, err := sim.Prepare(w, sim.Setup{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range prep.Cluster.Jobs {
		got = append(got, j.User)
	}
	if want := "[nobody u0 u7 u7 u70000 u3 nobody]"; fmt.Sprint(got) != want {
		t.Errorf("users %v, want %s", got, want)
	}
}
