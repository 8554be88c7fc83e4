package runtime_test

import (
	"testing"

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

func (moving) Dispatch(d framework.Dispatcher, jobs []*framework.Job) error {
	for _, job := range jobs {
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
