package sacct

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/xce-sched/xce/slurm"
)

// FuzzRead: sacct -P text never panics; an error is a *slurm.Error of
// the file; every job read is within bounds, and what Write writes of
// the jobs read reads back to the same jobs (lines aside). Seeds:
// testdata/fuzz/FuzzRead and below.
func FuzzRead(f *testing.F) {
	f.Add([]byte(head + "1001|1001|micro|normal|account2|user5|1005|user5|1005|2021-02-11T22:36:19|2021-02-11T22:36:19|2021-02-11T22:36:19|2021-02-11T22:36:34|00:00:15|0:0|COMPLETED|1|12|12|2800Mc||00:07:00|normal|b1|jobid_1001|\n"))
	f.Add([]byte("JobIDRaw|Submit|Start|End|Elapsed|NCPUS|ReqTRES|Constraints|State\n5|2021-01-01T00:00:00|2021-01-01T00:00:01|2021-01-02T00:00:01|1-00:00:00|4|gres/gpu=2|a|TIMEOUT\n5.0|x|||||||\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, _, err := Read(bytes.NewReader(data), "f.out")
		if err != nil {
			var se *slurm.Error
			if !errors.As(err, &se) || se.File != "f.out" {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		for i := range jobs {
			j := &jobs[i]
			if j.CPUs < 1 || j.Start < 0 || j.Run < 0 || j.ID < 0 {
				t.Fatalf("job %+v out of bounds", j)
			}
			j.Line = 0
		}
		var b bytes.Buffer
		if _, err := Write(&b, jobs); err != nil {
			t.Fatalf("write: %v", err) // Read gives no value holding '|'
		}
		back, _, err := Read(&b, "w")
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, b.String())
		}
		for i := range back {
			back[i].Line = 0
			// Write rounds memory to whole MB.
			back[i].Mem, jobs[i].Mem = slurm.Memory{}, slurm.Memory{}
		}
		if !reflect.DeepEqual(back, jobs) {
			t.Fatalf("read back\n%+v\nwant\n%+v", back, jobs)
		}
	})
}
