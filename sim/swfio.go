package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/workload/swf"
)

// ReadStats says what ReadSWF skipped, and which records it found out of
// submit order.
type ReadStats struct {
	// Skipped counts the lines skipped under skipBad: malformed lines
	// (swf.Reader.SkipBad) and records repeating an earlier job number.
	Skipped int
	// OutOfOrder counts the records whose submit time is earlier than
	// that of a record before them. They are kept: Prepare replays every
	// job in submit order.
	OutOfOrder int
	// FirstOutOfOrder describes the first of them (nil if none): its line,
	// field 2, and the earlier record it comes before in time.
	FirstOutOfOrder *swf.ParseError
}

// ReadSWF reads a whole SWF trace (plain or gzip) and checks what the
// simulator needs beyond the format: job numbers are unique, and the
// latest submit time plus the sum of the run times (field 4, counting -1 as
// 0) is at most cluster.MaxTime (10^15 s). A failed read returns an error
// naming the file, line and field: a *swf.ParseError, or a wrapped I/O
// error. With skipBad, malformed lines and records repeating a job number
// are skipped and counted instead; passing the time bound is an error
// either way. Records out of submit order are counted, not errors.
func ReadSWF(path string, skipBad bool) (*Workload, ReadStats, error) {
	var st ReadStats
	r, closer, err := swf.Open(path)
	if err != nil {
		return nil, st, err
	}
	defer closer.Close()
	r.SkipBad(skipBad)
	h, err := r.Header()
	if err != nil {
		return nil, st, err
	}
	w := &Workload{Header: h, File: path, MaxNodesLine: r.HeaderLine("MaxNodes"), MaxProcsLine: r.HeaderLine("MaxProcs")}
	if fi, err := os.Stat(path); err == nil && fi.Size() < 1<<32 {
		// Archive lines are 60–100 bytes: size the slice once (a .gz file
		// grows it as needed).
		w.Jobs = make([]swf.Job, 0, fi.Size()/70+16)
	}
	var (
		lines      []int         // line of each record kept (w.Lines)
		seen       map[int64]int // job number -> line; built at the first number that does not increase
		total      int64         // run times so far
		latest     int64         // the latest submit time so far
		latestLine int
		dups       int
	)
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, st, err
		}
		line := r.Line()
		if seen == nil && len(w.Jobs) > 0 && j.ID <= w.Jobs[len(w.Jobs)-1].ID {
			seen = make(map[int64]int, len(w.Jobs)+1)
			for k := range w.Jobs {
				seen[w.Jobs[k].ID] = lines[k]
			}
		}
		if seen != nil {
			if first, dup := seen[j.ID]; dup {
				if skipBad {
					dups++
					continue
				}
				return nil, st, &swf.ParseError{File: path, Line: line, Field: 1,
					Msg: fmt.Sprintf("duplicate job number %d (first on line %d)", j.ID, first)}
			}
			seen[j.ID] = line
		}
		// The horizon (cluster.MaxTime): every term is at most
		// swf.MaxTime, and the sum was at most MaxTime before: no overflow.
		top := max(latest, j.Submit, 0)
		if total += max(j.Run, 0); top+total > cluster.MaxTime {
			return nil, st, &swf.ParseError{File: path, Line: line,
				Msg: fmt.Sprintf("the latest submit time so far (%d s) plus the run times up to this line (%d s) exceed 10^15 s, the most a simulation may reach", top, total)}
		}
		if len(w.Jobs) > 0 && j.Submit < latest {
			st.OutOfOrder++
			if st.FirstOutOfOrder == nil {
				st.FirstOutOfOrder = &swf.ParseError{File: path, Line: line, Field: 2,
					Msg: fmt.Sprintf("%d is earlier than the submit time %d on line %d", j.Submit, latest, latestLine)}
			}
		}
		if len(w.Jobs) == 0 || j.Submit > latest {
			latest, latestLine = j.Submit, line
		}
		w.Jobs = append(w.Jobs, j)
		lines = append(lines, line)
	}
	w.Lines = lines
	st.Skipped = r.Skipped() + dups
	return w, st, nil
}

// WriteSchedule writes the simulated schedule as SWF: every job of w in its
// order, with the wait time (field 3), run time (4) and allocated
// processors (5) the simulation gave it. A job that never started keeps
// wait, run and allocated processors -1 and gets status 5 (cancelled);
// one still running at the end gets run time -1.
func WriteSchedule(path string, s *runtime.Scheduler, w *Workload) error {
	byID := make(map[int64]*framework.Job, len(s.Jobs))
	for _, j := range s.Jobs {
		byID[int64(j.Spec.ID)] = j
	}
	out := &Workload{Header: w.Header, Jobs: make([]swf.Job, 0, len(w.Jobs))}
	out.Header.Comments = append([]string{"Simulated by xce: wait, run time and allocated processors are the simulation's."}, w.Header.Comments...)
	for _, rec := range w.Jobs {
		j, ok := byID[rec.ID]
		if !ok {
			continue // dropped by cleaning
		}
		rec.Wait, rec.Run, rec.AllocProcs = -1, -1, -1
		switch j.State {
		case framework.Done, framework.Running:
			rec.Wait = j.Start - j.Spec.Submit
			rec.AllocProcs = int64(j.Alloc.Slots())
			if j.State == framework.Done {
				rec.Run = j.End - j.Start
			}
		default:
			rec.Status = 5
		}
		out.Jobs = append(out.Jobs, rec)
	}
	return WriteWorkload(path, out)
}

// WriteWorkload writes w as an SWF file at path, header and records as
// they are (a replayed history's schedule, FromHistory).
func WriteWorkload(path string, w *Workload) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	sw := swf.NewWriter(bw)
	err = sw.WriteHeader(w.Header)
	for _, rec := range w.Jobs {
		if err != nil {
			break
		}
		err = sw.Write(rec)
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
