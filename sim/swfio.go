package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/workload/swf"
)

// ReadSWF reads a whole SWF trace (plain or gzip). With skipBad, malformed
// lines are skipped and counted instead of failing the read; the error of
// a failed read names the file, line and field.
func ReadSWF(path string, skipBad bool) (*Workload, int, error) {
	r, closer, err := swf.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer closer.Close()
	r.SkipBad(skipBad)
	h, err := r.Header()
	if err != nil {
		return nil, 0, err
	}
	w := &Workload{Header: h}
	if st, err := os.Stat(path); err == nil && st.Size() < 1<<32 {
		// Archive lines are 60–100 bytes: size the slice once (a .gz file
		// grows it as needed).
		w.Jobs = make([]swf.Job, 0, st.Size()/70+16)
	}
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, r.Skipped(), nil
}

// WriteSchedule writes the simulated schedule as SWF: every job of w in its
// order, with the wait time (field 3), run time (4) and allocated
// processors (5) the simulation gave it. A job that never started keeps
// wait, run and allocated processors -1 and gets status 5 (cancelled);
// one still running at the end gets run time -1.
func WriteSchedule(path string, s *runtime.Scheduler, w *Workload) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	byID := make(map[int64]*framework.Job, len(s.Jobs))
	for _, j := range s.Jobs {
		byID[int64(j.Spec.ID)] = j
	}
	bw := bufio.NewWriter(f)
	sw := swf.NewWriter(bw)
	h := w.Header
	h.Comments = append([]string{"Simulated by xce: wait, run time and allocated processors are the simulation's."}, h.Comments...)
	err = sw.WriteHeader(h)
	for _, rec := range w.Jobs {
		if err != nil {
			break
		}
		j, ok := byID[rec.ID]
		if !ok {
			continue // dropped by cleaning
		}
		out := rec
		out.Wait, out.Run, out.AllocProcs = -1, -1, -1
		switch j.State {
		case framework.Done, framework.Running:
			out.Wait = j.Start - j.Spec.Submit
			out.AllocProcs = int64(j.Alloc.Slots())
			if j.State == framework.Done {
				out.Run = j.End - j.Start
			}
		default:
			out.Status = 5
		}
		err = sw.Write(out)
	}
	if err == nil {
		err = sw.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
