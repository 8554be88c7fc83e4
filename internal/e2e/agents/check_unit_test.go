package agents

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/xce-sched/xce/internal/event"
)

// TestSweep: the sweep finds a host's slots or the license used beyond
// its limit, and only then; intervals are half-open (one ending when
// another starts do not overlap).
func TestSweep(t *testing.T) {
	limit := map[string]int{"h1": 4, "lic": 2}
	iv := func(job, start, end int64, use map[string]int) interval {
		return interval{job: job, start: start, end: end, use: use}
	}
	for _, c := range []struct {
		name string
		ivs  []interval
		most map[string]int
		errs []string
	}{
		{"full, not over", []interval{iv(1, 0, 10, map[string]int{"h1": 2}), iv(2, 5, 15, map[string]int{"h1": 2}), iv(3, 10, 20, map[string]int{"h1": 2})},
			map[string]int{"h1": 4}, nil},
		{"one slot over", []interval{iv(1, 0, 10, map[string]int{"h1": 3}), iv(2, 9, 15, map[string]int{"h1": 2})},
			map[string]int{"h1": 5}, []string{"at 9: h1 used 5, more than its 4, by jobs [1 2]"}},
		{"a third license", []interval{iv(1, 0, 10, map[string]int{"h1": 1, "lic": 1}), iv(2, 1, 10, map[string]int{"h2": 1, "lic": 1}),
			iv(3, 9, 11, map[string]int{"h3": 1, "lic": 1})},
			map[string]int{"h1": 1, "h2": 1, "h3": 1, "lic": 3}, []string{"at 9: lic used 3, more than its 2, by jobs [1 2 3]"}},
		{"no limit for h9", []interval{iv(1, 0, 10, map[string]int{"h9": 100})}, map[string]int{"h9": 100}, nil},
		{"backwards", []interval{iv(7, 10, 5, map[string]int{"h1": 1})}, map[string]int{}, []string{"job 7: ends at 5 before it starts at 10"}},
	} {
		most, errs := sweep(c.ivs, limit)
		if !maps.Equal(most, c.most) || !slices.Equal(errs, c.errs) {
			t.Errorf("%s: most %v, errors %q; want %v, %q", c.name, most, errs, c.most, c.errs)
		}
	}
}

// TestFoldLog: the fold of the event log finds an over-used host or
// license, a placement on a host that is not up, an attempt started
// twice or on another host, an attempt placed again without a requeue,
// and says nothing of a log without them.
func TestFoldLog(t *testing.T) {
	capacity, shared := map[string]int{"h1": 4, "h2": 4}, map[string]float64{"lic": 2}
	sub := func(job int64) event.Event {
		return event.Event{Type: event.JobSubmitted, Submit: &event.Submit{Job: job}}
	}
	place := func(job int64, attempt int, lic float64, hosts ...event.HostAlloc) event.Event {
		p := event.Placement{Job: job, Attempt: attempt, Hosts: hosts}
		if lic > 0 {
			p.Shared = map[string]float64{"lic": lic}
		}
		return event.Event{Type: event.CycleDecided, Cycle: &event.Cycle{Started: []event.Placement{p}}}
	}
	start := func(job int64, attempt int, host string) event.Event {
		return event.Event{Type: event.JobStarted, Started: &event.Started{Job: job, Attempt: attempt, Host: host, PID: 100 + int(job)}}
	}
	fin := func(job int64, attempt int, requeued bool) event.Event {
		return event.Event{Type: event.JobFinished, Finished: &event.Finished{Job: job, Attempt: attempt, Requeued: requeued}}
	}
	up := func(name string) event.Event {
		return event.Event{Type: event.HostRegistered, Host: &event.Host{Name: name}}
	}
	down := func(name string) event.Event { return event.Event{Type: event.HostLost, Host: &event.Host{Name: name}} }
	h := func(name string, slots int) event.HostAlloc { return event.HostAlloc{Host: name, Slots: slots} }

	good := []event.Event{up("h1"), up("h2"), sub(1), sub(2), sub(3),
		place(1, 1, 1, h("h1", 2), h("h2", 2)), place(2, 1, 1, h("h1", 2)), start(1, 1, "h1"), start(2, 1, "h1"),
		fin(1, 1, true), place(1, 2, 1, h("h2", 4)), place(3, 1, 0, h("h1", 2)), fin(2, 1, false), fin(1, 2, false), fin(3, 1, false)}
	for _, c := range []struct {
		name string
		evs  []event.Event
		want string // in the first error; "" for none
	}{
		{"good", good, ""},
		{"a host over", []event.Event{up("h1"), sub(1), sub(2), place(1, 1, 0, h("h1", 3)), place(2, 1, 0, h("h1", 2))}, "host h1 holds 5 slots, more than its 4"},
		{"a third license", []event.Event{up("h1"), up("h2"), sub(1), sub(2), sub(3), place(1, 1, 1, h("h1", 1)), place(2, 1, 1, h("h2", 1)),
			place(3, 1, 1, h("h2", 1))}, "3 of shared resource lic held, more than its 2"},
		{"a freed slot reused", []event.Event{up("h1"), sub(1), sub(2), place(1, 1, 0, h("h1", 4)), fin(1, 1, false), place(2, 1, 0, h("h1", 4))}, ""},
		{"a host down", []event.Event{up("h1"), down("h1"), sub(1), place(1, 1, 0, h("h1", 1))}, "placed on host h1, which is not up"},
		{"started twice", []event.Event{up("h1"), sub(1), place(1, 1, 0, h("h1", 1)), start(1, 1, "h1"), start(1, 1, "h1")}, "started again"},
		{"started elsewhere", []event.Event{up("h1"), up("h2"), sub(1), place(1, 1, 0, h("h1", 1), h("h2", 1)), start(1, 1, "h2")}, "its first host is h1"},
		{"placed again without a requeue", []event.Event{up("h1"), sub(1), place(1, 1, 0, h("h1", 1)), fin(1, 1, false), place(1, 2, 0, h("h1", 1))},
			"placed again, its attempt 1 not requeued"},
		{"finished twice", []event.Event{up("h1"), sub(1), place(1, 1, 0, h("h1", 1)), fin(1, 1, false), fin(1, 1, false)}, "finished again"},
		{"placed before its submit", []event.Event{up("h1"), place(1, 1, 0, h("h1", 1))}, "placed before its submit"},
	} {
		evs := slices.Clone(c.evs)
		for i := range evs {
			evs[i].Index = uint64(i + 1)
		}
		v := foldLog(evs, capacity, shared)
		switch {
		case c.want == "" && len(v.errs) > 0:
			t.Errorf("%s: %q, want no error", c.name, v.errs)
		case c.want != "" && (len(v.errs) == 0 || !strings.Contains(v.errs[0], c.want)):
			t.Errorf("%s: %q, want an error saying %q", c.name, v.errs, c.want)
		}
	}
	v := foldLog(good, capacity, shared)
	if !maps.Equal(v.maxUse, map[string]float64{"h1": 4, "h2": 4, "lic": 2}) || len(v.attempts[1]) != 2 || v.attempts[2][0].pid != 102 {
		t.Errorf("good log: most used %v, job 1's attempts %d, job 2's pid %d", v.maxUse, len(v.attempts[1]), v.attempts[2][0].pid)
	}
}

// TestParseOutput reads a job's output file: lines before the first
// start line, then each start line's record.
func TestParseOutput(t *testing.T) {
	pre, recs := parseOutput("sh: 1: oops\nstart 100 7 4242 h1 2 h3 2\nout-6 XCE_HOSTS=h1 h1 h3 h3\nerr-6\nend 250\nstart x 7 4343 h2 1\nend 9\nend 12\n")
	if !slices.Equal(pre, []string{"sh: 1: oops"}) || len(recs) != 2 {
		t.Fatalf("pre %q, records %+v", pre, recs)
	}
	if r := recs[0]; r.start != 100 || r.jobID != "7" || r.pid != 4242 || r.mcpu != "h1 2 h3 2" || r.end() != 250 || len(r.lines) != 3 {
		t.Errorf("record 1: %+v, end %d", r, r.end())
	}
	if r := recs[1]; r.start != -1 || r.pid != 4343 || r.end() != 12 {
		t.Errorf("record 2: %+v, end %d", r, r.end())
	}
	if pre, recs := parseOutput(""); pre != nil || recs != nil {
		t.Errorf("empty: %q %+v", pre, recs)
	}
	if m, err := parseMCPU("h1 2 h3 2"); err != nil || !maps.Equal(m, map[string]int{"h1": 2, "h3": 2}) {
		t.Errorf("parseMCPU: %v %v", m, err)
	}
	for _, bad := range []string{"", "h1", "h1 0", "h1 x", "h1 1 h1 1"} {
		if _, err := parseMCPU(bad); err == nil {
			t.Errorf("parseMCPU(%q): no error", bad)
		}
	}
	p := event.Placement{Hosts: []event.HostAlloc{{Host: "h2", Slots: 2}, {Host: "h1", Slots: 1}}}
	if mcpuHosts(p) != "h2 2 h1 1" || xceHosts(p) != "h2 h2 h1" {
		t.Errorf("placement %+v: LSB_MCPU_HOSTS %q, XCE_HOSTS %q", p, mcpuHosts(p), xceHosts(p))
	}
}
