package slurmsim

import (
	"bytes"
	"errors"
	"testing"

	"github.com/xce-sched/xce/slurm"
)

// FuzzRead: an event list never panics; an error is a *slurm.Error of the
// file; every job read has at least one CPU, IDs are unique and every
// requirement it states builds (ResReq) or errs, never panics. Seeds:
// testdata/fuzz/FuzzRead and below.
func FuzzRead(f *testing.F) {
	f.Add([]byte("-dt 0 -e submit_batch_job | -J jobid_1001 -sim-walltime 15 --uid=user5 -t 00:07:00 -n 12 --ntasks-per-node=12 -A account2 -p normal -q normal pseudo.job\n"))
	f.Add([]byte("-dt 49 -e submit_batch_job | -jid 7 -sim-walltime -1 --uid user1 -t 30 -N 2 -c 2 --constraint=IB&(CPU-N|CPU-M) --mem=4G --gres=gpu:tesla:2 pseudo.job\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := Read(bytes.NewReader(data), "f.events", 1001)
		if err != nil {
			var se *slurm.Error
			if !errors.As(err, &se) || se.File != "f.events" {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		seen := map[int64]bool{}
		for _, j := range jobs {
			if j.CPUs < 1 || seen[j.ID] || j.Submit < 0 {
				t.Fatalf("job %+v", j)
			}
			seen[j.ID] = true
			if _, err := j.ResReq(slurm.Target{Mem: true, GPUs: true, MaxSlots: 12, DefMem: slurm.Memory{MB: 2800, Per: slurm.PerCPU}}); err != nil {
				t.Fatalf("job %+v: ResReq: %v (its constraint was checked)", j, err)
			}
		}
	})
}
