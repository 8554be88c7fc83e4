package sim_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/cluster/slurmconf"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/sim"
	"github.com/xce-sched/xce/slurm"
	"github.com/xce-sched/xce/workload/sacct"
	"github.com/xce-sched/xce/workload/slurmsim"
)

// microDir is the Slurm trace folder (traceDir/slurm-micro-cluster).
func microDir(t *testing.T) string {
	dir := filepath.Join(traceDir(t), "slurm-micro-cluster")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s absent: %v", dir, err)
	}
	return dir
}

// microCluster imports the trace's slurm.conf as `--cluster slurm.conf`
// does (gres.conf and sacctmgr.script beside it).
func microCluster(t *testing.T, dir string) *cluster.Cluster {
	t.Helper()
	yaml, _, _, err := slurmconf.Import(slurmconf.Files{Conf: filepath.Join(dir, "slurm.conf")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Parse("slurm.conf", yaml)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readSacct(t *testing.T, dir string) []slurm.Job {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "slurm_acct.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, st, err := sacct.Read(f, "slurm_acct.out")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 500 || st != (sacct.Stats{}) {
		t.Fatalf("%d jobs, %+v; want the trace's 500", len(jobs), st)
	}
	return jobs
}

func readEvents(t *testing.T, dir string, first int64) []slurm.Job {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "jobs500.events"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := slurmsim.Read(f, "jobs500.events", first)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// decision is where and when a job ran in a replay.
type decision struct {
	start, end int64
	hosts      string
}

// replaySlurm replays jobs on c and returns the scheduler's jobs, each
// job's decision and the prepared workload.
func replaySlurm(t *testing.T, jobs []slurm.Job, c *cluster.Cluster, absolute bool) ([]*framework.Job, map[cluster.JobID]decision, *sim.Prepared) {
	t.Helper()
	w, err := sim.SlurmWorkload(jobs, c, "trace", absolute)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.Prepare(w, sim.Setup{Base: c})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[cluster.JobID]string{}
	s, _, _, err := sim.Replay(context.Background(), p, plugins.NewInTreeRegistry(), func(e *sim.Event) {
		for _, j := range e.Considered {
			if j.State == framework.Running && j.Start == e.Now {
				hosts[j.Spec.ID] = fmt.Sprint(j.Alloc.Hosts)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	d := map[cluster.JobID]decision{}
	for _, j := range s.Jobs {
		d[j.Spec.ID] = decision{j.Start, j.End, hosts[j.Spec.ID]}
	}
	return s.Jobs, d, p
}

// TestMicroVersusSlurm is the acceptance check of docs/slurm.md: the
// trace's 500 jobs (slurm_acct.out) replayed on its slurm.conf, beside
// what Slurm 20.x did. Slurm's side is the trace's own: mean wait
// 12301.354 s and mean bounded slowdown (τ = 10 s) 215.0528…, worked out
// from slurm_acct.out's Submit, Start and End outside xce. xce's must be
// within 15% (wait) and 20% (bounded slowdown); Kendall's τ_b of the
// start order is reported.
func TestMicroVersusSlurm(t *testing.T) {
	dir := microDir(t)
	c := microCluster(t, dir)
	recorded := readSacct(t, dir)
	jobs, _, p := replaySlurm(t, recorded, c, true)
	t0 := recorded[0].Submit
	var ran []sim.Ran
	for _, j := range recorded {
		ran = append(ran, sim.Ran{ID: cluster.JobID(j.ID), Submit: j.Submit - t0, Start: j.Start - t0, End: j.End - t0, Slots: j.CPUs})
	}
	v := sim.Compare(jobs, ran, p.TotalSlots)
	if v.Jobs != 500 || v.Missing != 0 {
		t.Fatalf("compared %d jobs, %d missing; want all 500", v.Jobs, v.Missing)
	}
	if math.Abs(v.Real.WaitMeanS-12301.354) > 1e-9 || math.Abs(v.Real.BSLDMean-215.0528057624074) > 1e-9 {
		t.Errorf("Slurm's metrics: wait %.3f, bsld %.13f; want 12301.354 and 215.0528057624074", v.Real.WaitMeanS, v.Real.BSLDMean)
	}
	t.Logf("mean wait: xce %.1f s, Slurm %.1f s (%+.1f%%); bounded slowdown: xce %.2f, Slurm %.2f (%+.1f%%); Kendall τ_b %.3f",
		v.Sim.WaitMeanS, v.Real.WaitMeanS, 100*v.WaitMeanDiff, v.Sim.BSLDMean, v.Real.BSLDMean, 100*v.BSLDMeanDiff, v.KendallTau)
	if math.Abs(v.WaitMeanDiff) > 0.15 {
		t.Errorf("mean wait %+.1f%% from Slurm's; want within 15%%", 100*v.WaitMeanDiff)
	}
	if math.Abs(v.BSLDMeanDiff) > 0.20 {
		t.Errorf("mean bounded slowdown %+.1f%% from Slurm's; want within 20%%", 100*v.BSLDMeanDiff)
	}
	if v.KendallTau <= 0 {
		t.Errorf("Kendall τ_b %.3f: the start orders do not agree", v.KendallTau)
	}
}

// TestMicroEventsSameAsSacct: the trace's two forms, jobs500.events (the
// submissions) and slurm_acct.out (what ran), give the same jobs and the
// same decisions. The events carry what sacct lacks, --constraint (202
// jobs), and the simulator's walltimes, which are Slurm's elapsed times
// but for the second Slurm adds to some jobs (59: +1 s) and the limit of
// those that run until it (-1: the limit, or the limit + 1 s when it
// TIMEOUTs). So: every job's request is the same but for its select[],
// every run time within a second; and with the events' run times and
// constraints made sacct's, every decision (start, end, hosts) is the
// same.
func TestMicroEventsSameAsSacct(t *testing.T) {
	dir := microDir(t)
	c := microCluster(t, dir)
	acct := readSacct(t, dir)
	events := readEvents(t, dir, c.Slurm.FirstJobID)
	if len(events) != 500 {
		t.Fatalf("%d events; want 500", len(events))
	}
	wa, err := sim.SlurmWorkload(acct, c, "slurm_acct.out", true)
	if err != nil {
		t.Fatal(err)
	}
	we, err := sim.SlurmWorkload(events, c, "jobs500.events", false)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int{}
	for i, j := range wa.Jobs {
		byID[j.ID] = i
	}
	sel := regexp.MustCompile(`^select\[[^]]*\] `)
	constrained := 0
	for i, je := range we.Jobs {
		k, ok := byID[je.ID]
		if !ok {
			t.Fatalf("job %d of the events is not in sacct", je.ID)
		}
		ja, ra, re := wa.Jobs[k], wa.Requests[k], we.Requests[i]
		if je.Submit != ja.Submit || je.ReqProcs != ja.ReqProcs || je.ReqTime != ja.ReqTime {
			t.Errorf("job %d: submit %d, CPUs %d, limit %d (events) vs %d, %d, %d (sacct)", je.ID, je.Submit, je.ReqProcs, je.ReqTime, ja.Submit, ja.ReqProcs, ja.ReqTime)
		}
		if d := ja.Run - je.Run; d < 0 || d > 1 {
			t.Errorf("job %d: run time %d (events) vs %d (sacct)", je.ID, je.Run, ja.Run)
		}
		if sel.MatchString(re.ResReq) {
			constrained++
		}
		plain := sel.ReplaceAllString(re.ResReq, "")
		if plain != ra.ResReq || re.User != ra.User || re.Project != ra.Project || re.Queue != ra.Queue || re.QOS != ra.QOS {
			t.Errorf("job %d: %+v (events) vs %+v (sacct)", je.ID, re, ra)
		}
	}
	if constrained != 202 {
		t.Errorf("%d jobs with a constraint; want the events' 202", constrained)
	}
	// The same information: the events with sacct's run times and
	// without their constraints.
	same := make([]slurm.Job, len(events))
	for i, j := range events {
		j.Run, j.Constraint = acct[byID[j.ID]].Run, ""
		same[i] = j
	}
	_, da, _ := replaySlurm(t, acct, c, true)
	_, de, _ := replaySlurm(t, same, c, false)
	if len(da) != 500 || len(de) != 500 {
		t.Fatalf("%d and %d decisions", len(da), len(de))
	}
	for id, a := range da {
		if e := de[id]; e != a {
			t.Errorf("job %d: %+v (events) vs %+v (sacct)", id, e, a)
		}
	}
}
