package runtime_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// moving is a policy that reserves each job that does not start at its
// earliest time, then moves the reservation a second later, then records
// the moved one once more (as it stands).
type moving struct{}

func (moving) Name() string { return "moving" }

func (moving) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		placed, err := d.Allocate(job)
		if err != nil {
			return err
		}
		if placed {
			continue
		}
		r, ok := d.Earliest(job)
		if !ok {
			continue
		}
		d.Reserve(job, r)
		r.Start, r.End = r.Start+1, r.End+1
		d.Reserve(job, r)
		d.Reserve(job, *job.Reserved)
	}
	return nil
}

// TestReserveAgain: a job reserved anew while it holds a reservation
// holds the new one (the dispatcher keeps a job's reservation record only
// when it is given the same one again), and the projection has it once.
func TestReserveAgain(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Jobs: []ct.Job{{ID: 1, Min: 4, Runtime: 100, Estimate: 100}, {ID: 2, Min: 4, Runtime: 10, Estimate: 10}, {ID: 3, Min: 1, Runtime: 10, Estimate: 10}}}
	reg := plugins.NewInTreeRegistry()
	if err := reg.Register("moving", func(framework.Handle) (framework.Plugin, error) { return moving{}, nil }); err != nil {
		t.Fatal(err)
	}
	prof := framework.Profile{Allocators: []string{"parjob"}, Queues: []framework.QueueProfile{{Picker: "priority", Policy: "moving"}}}
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: reg, Profile: &prof})
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, s, 0)
	for i, want := range []int64{-1, 101, 112} {
		j := s.Jobs[i]
		switch {
		case want < 0 && j.State != framework.Running:
			t.Errorf("job %d: %s, want it running", i+1, j.State)
		case want >= 0 && (j.Reserved == nil || j.Reserved.Start != want || j.Reserved.End != want+10):
			t.Errorf("job %d: reserved %+v, want [%d, %d)", i+1, j.Reserved, want, want+10)
		}
	}
}

// rerecord is a policy that re-records, in the cycle at time at, the
// reservation of job id as it stands (the projection is not built yet)
// and then moves it by move seconds; every other job is allocated, else
// reserved at its earliest start.
type rerecord struct {
	at, move int64
	id       cluster.JobID
	moved    *bool
}

func (rerecord) Name() string { return "rerecord" }

func (p rerecord) Dispatch(d framework.Dispatcher, jobs framework.Jobs) error {
	for job, ok := jobs.Next(); ok; job, ok = jobs.Next() {
		if d.Now() == p.at && job.Spec.ID == p.id && job.Reserved != nil && d.Unchanged(job) {
			d.Reserve(job, *job.Reserved)
			r := *job.Reserved
			r.Start, r.End = r.Start+p.move, r.End+p.move
			d.Reserve(job, r)
			*p.moved = true
			continue
		}
		placed, err := d.Allocate(job)
		if err != nil {
			return err
		}
		if placed {
			continue
		}
		if r, ok := d.Earliest(job); ok {
			if r.Start == d.Now() {
				if err := d.Start(job, r); err != nil {
					return err
				}
				continue
			}
			d.Reserve(job, r)
		}
	}
	return nil
}

// TestReserveBeforeProjection: reservations recorded before anything in
// the cycle needed the projection count as soon as they are made. On one
// host of 4 slots, job 1 runs on 2 until 100 and job 2 (4 slots, 10 s)
// holds [100, 110). At t=1 job 2's reservation is re-recorded, then moved
// to [150, 160): job 3 (2 slots, 200 s), which fits now but would run
// past 150, does not start (its Allocate respects the reservation) and is
// reserved after job 2, at 160; job 4 (2 slots, 120 s) ends before 150 and
// starts now (the reservation moved away from 100 holds nothing there).
func TestReserveBeforeProjection(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Jobs: []ct.Job{{ID: 1, Min: 2, Runtime: 100, Estimate: 100}, {ID: 2, Min: 4, Runtime: 10, Estimate: 10},
			{ID: 3, Min: 2, Submit: 1, Runtime: 200, Estimate: 200}, {ID: 4, Min: 2, Submit: 1, Runtime: 120, Estimate: 120}}}
	moved := false
	reg := plugins.NewInTreeRegistry()
	if err := reg.Register("rerecord", func(framework.Handle) (framework.Plugin, error) {
		return rerecord{at: 1, move: 50, id: 2, moved: &moved}, nil
	}); err != nil {
		t.Fatal(err)
	}
	prof := framework.Profile{Allocators: []string{"parjob"}, Queues: []framework.QueueProfile{{Picker: "priority", Policy: "rerecord"}}}
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: reg, Profile: &prof})
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, s, 0)
	cycle(t, s, 1)
	if !moved {
		t.Fatal("job 2's reservation was not re-recorded at t=1")
	}
	j1, j2, j3, j4 := s.Jobs[0], s.Jobs[1], s.Jobs[2], s.Jobs[3]
	reservedAt := func(j *framework.Job, start, end int64) bool {
		return j.State == framework.Pending && j.Reserved != nil && j.Reserved.Start == start && j.Reserved.End == end
	}
	if j1.State != framework.Running || !reservedAt(j2, 150, 160) || !reservedAt(j3, 160, 360) || j4.State != framework.Running || j4.Start != 1 {
		t.Errorf("job 1 %v; job 2 %v %+v; job 3 %v %+v; job 4 %v at %d", j1.State, j2.State, j2.Reserved, j3.State, j3.Reserved, j4.State, j4.Start)
	}
}
