package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *ScenarioError, and that every scenario it accepts is consistent: Init
// done, every request parsed, IDs in range, and the running jobs fit the
// cluster together.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/scenario/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range errorCases {
		if len(tc.in) <= 4096 { // the generated giants would slow mutation
			f.Add([]byte(tc.in))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *ScenarioError: %v", err, err)
			}
			if se.Msg == "" {
				t.Fatalf("empty message: %v", err)
			}
			return
		}
		checkLoaded(t, c)
	})
}

// checkLoaded checks the invariants of a successfully loaded scenario.
func checkLoaded(t *testing.T, c *Cluster) {
	t.Helper()
	if c.Schema() == nil || len(c.Hosts) == 0 || len(c.Queues) == 0 {
		t.Fatalf("incomplete cluster: schema %v, %d hosts, %d queues", c.Schema() != nil, len(c.Hosts), len(c.Queues))
	}
	for _, h := range c.Hosts {
		if h.Slots < 1 || len(h.Capacity) != len(c.Resources) {
			t.Fatalf("host %+v", h)
		}
		if id, ok := c.HostByName(h.Name); !ok || c.Hosts[id].Name != h.Name {
			t.Fatalf("host %q not found by name", h.Name)
		}
	}
	for _, q := range c.Queues {
		for _, h := range q.Hosts {
			if int(h) >= len(c.Hosts) {
				t.Fatalf("queue %q: host %d", q.Name, h)
			}
		}
	}
	s := NewState(c)
	for i := range c.Jobs {
		j := &c.Jobs[i]
		if j.Req == nil || j.TasksMin < 1 || j.TasksMax < j.TasksMin || int(j.Queue) >= len(c.Queues) {
			t.Fatalf("job %+v", j)
		}
		total := 0
		for k, hs := range j.RunningOn {
			if int(hs.Host) >= len(c.Hosts) || hs.Slots < 1 || k > 0 && hs.Host <= j.RunningOn[k-1].Host {
				t.Fatalf("job %d: running_on %+v", j.ID, j.RunningOn)
			}
			total += hs.Slots
		}
		if len(j.RunningOn) > 0 && (total < j.TasksMin || total > j.TasksMax) {
			t.Fatalf("job %d: %d running slots, tasks %d,%d", j.ID, total, j.TasksMin, j.TasksMax)
		}
		a := c.RunningAlloc(j)
		if err := s.Fits(a); err != nil {
			t.Fatalf("job %d: running allocation does not fit: %v", j.ID, err)
		}
		s.Take(a)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
