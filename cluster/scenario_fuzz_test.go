package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *ScenarioError of bounded length, and that every scenario it accepts is
// consistent: Init done, every request parsed, IDs in range, and the
// running jobs fit the cluster together.
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
	for _, tc := range gpuCases {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(gpuScenario))
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
			// Bounded whatever the input (issue 11 §5): quoted values are
			// cut to 40 characters, the message to 400 bytes.
			if len(se.Msg) > maxMsg || len(err.Error()) > 1200 {
				t.Fatalf("error of %d bytes (message %d): %.300q", len(err.Error()), len(se.Msg), err.Error())
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
	checkGroups(t, c)
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
		if len(j.RunningOn) == 0 {
			continue // RunningAlloc of a pending job would still hold its shared rusage
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

// reserveMethods are the reservation methods FuzzParseRunning draws from.
var reserveMethods = [3]string{"per_task", "per_host", "per_job"}

// checkGroups checks the expansion of a loaded scenario's groups: every
// flat list sorted, without repeats and in range, no bigger than
// MaxGroupMembers in all, and holding each direct member.
func checkGroups(t *testing.T, c *Cluster) {
	t.Helper()
	total := 0
	for g, ug := range c.UserGroups {
		users := c.UserGroupUsers(g)
		total += len(users)
		for k, id := range users {
			if int(id) >= len(c.GroupUsers()) || k > 0 && id <= users[k-1] {
				t.Fatalf("user group %q: users %v", ug.Name, users)
			}
		}
		for _, m := range ug.Members {
			if _, sub := c.UserGroupByName(m); !sub && !c.InUserGroup(m, g) {
				t.Fatalf("user group %q lacks its member %q", ug.Name, m)
			}
		}
	}
	for g, hg := range c.HostGroups {
		hosts := c.HostGroupHosts(g)
		total += len(hosts)
		if len(hosts) == 0 {
			t.Fatalf("host group %q is empty", hg.Name)
		}
		for k, h := range hosts {
			if int(h) >= len(c.Hosts) || k > 0 && h <= hosts[k-1] {
				t.Fatalf("host group %q: hosts %v", hg.Name, hosts)
			}
		}
	}
	if total > MaxGroupMembers {
		t.Fatalf("%d group members in all", total)
	}
}

// FuzzParseRunning builds scenarios of two hosts, a license pool and three
// jobs from fuzzed small numbers and checks the loader's over-commit check
// against a direct simulation: Parse must fail at the running_on of the
// first job that does not fit, or succeed when all fit. A zero rusage[]
// amount needs nothing, so rusage[mem=0] fits a host without mem
// (testdata/fuzz/FuzzParseRunning/352faf5781c2cb6d). Byte 17 picks mem's
// reservation method.
func FuzzParseRunning(f *testing.F) {
	f.Add([]byte{2, 3, 1, 2, 1, 1, 1, 1, 0, 2, 1, 1, 0, 1, 1, 0, 0})
	f.Add([]byte{1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1, 2, 2})
	f.Add([]byte{2, 3, 1, 2, 1, 1, 1, 1, 0, 2, 1, 1, 0, 1, 1, 0, 0, 1})
	f.Add([]byte{2, 3, 1, 2, 1, 1, 1, 1, 0, 2, 1, 1, 0, 1, 1, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		at := func(i int, n byte) int { // the i-th number, in [0, n)
			if i < len(b) {
				return int(b[i] % n)
			}
			return 0
		}
		slots := [2]int{1 + at(0, 4), 1 + at(1, 4)}
		mem := [2]int{at(2, 4) * 1000, at(3, 4) * 1000} // 0: no mem resource
		lic := at(4, 4)
		method := reserveMethods[at(17, 3)]
		var y strings.Builder
		y.WriteString("hosts:\n")
		for h := range 2 {
			fmt.Fprintf(&y, "  - {name: h%d, slots: %d", h, slots[h])
			if mem[h] > 0 {
				fmt.Fprintf(&y, ", resources: {mem: %d}", mem[h])
			}
			y.WriteString("}\n")
		}
		fmt.Fprintf(&y, "shared: {lic: %d}\n", lic)
		if mem[0] > 0 || mem[1] > 0 {
			fmt.Fprintf(&y, "reservation_usage: {mem: %s}\n", method)
		}
		y.WriteString("jobs:\n")
		freeSlots, freeMem, freeLic := slots, [2]float64{float64(mem[0]), float64(mem[1])}, lic
		memIsRes := mem[0] > 0 || mem[1] > 0
		firstBad := -1
		for j := range 3 {
			x := [2]int{at(5+4*j, 4), at(6+4*j, 4)}
			memPerSlot, licPerJob := at(7+4*j, 3)*500, at(8+4*j, 3)
			fmt.Fprintf(&y, "  - {id: %d, tasks: \"1,8\", resreq: \"rusage[mem=%d:lic=%d]\"", j, memPerSlot, licPerJob)
			if x[0]+x[1] == 0 {
				y.WriteString("}\n")
				continue
			}
			y.WriteString(", running_on: {")
			for h := range 2 {
				if x[h] > 0 {
					fmt.Fprintf(&y, "h%d: %d, ", h, x[h])
				}
			}
			y.WriteString("}}\n")
			if firstBad >= 0 {
				continue
			}
			fits := licPerJob <= freeLic
			var need [2]float64
			firstHost := true // running_on lists h0 before h1
			for h := range 2 {
				if x[h] == 0 {
					continue
				}
				switch method {
				case "per_task":
					need[h] = float64(memPerSlot * x[h])
				case "per_host":
					need[h] = float64(memPerSlot)
				case "per_job":
					if firstHost {
						need[h] = float64(memPerSlot)
					}
				}
				firstHost = false
				// A zero amount needs nothing, even on a host without mem.
				fits = fits && x[h] <= freeSlots[h] && (!memIsRes || need[h] == 0 || mem[h] > 0 && need[h] <= freeMem[h])
			}
			if !fits {
				firstBad = j
				continue
			}
			for h := range 2 {
				freeSlots[h] -= x[h]
				if memIsRes && x[h] > 0 {
					freeMem[h] -= need[h]
				}
			}
			freeLic -= licPerJob
		}
		c, err := Parse("run.yaml", []byte(y.String()))
		switch {
		case firstBad < 0 && err != nil:
			t.Fatalf("%s\nunexpected error: %v", y.String(), err)
		case firstBad >= 0 && err == nil:
			t.Fatalf("%s\njob %d over-commits, but no error", y.String(), firstBad)
		case firstBad >= 0:
			var se *ScenarioError
			if !errors.As(err, &se) || se.Path != fmt.Sprintf("jobs[%d].running_on", firstBad) {
				t.Fatalf("%s\ngot %v, want an error at jobs[%d].running_on", y.String(), err, firstBad)
			}
		default:
			checkLoaded(t, c)
		}
	})
}
