//go:build linux

package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/client"
)

// TestGapFill: three members serving TLS, with a raft snapshot threshold
// of 16 entries (16 trailing) checked every 50-100 ms, take jobs (some
// killed) until the leader has compacted its raft log; a follower
// stopped meanwhile is started again after the compaction, and a fourth
// member with an empty data directory joins (xce server join): both are
// restored from the leader's snapshot, beyond their local copies of the
// event log, and fill them from another member's API. Every job's
// history, read through either of them (while they fill, or after),
// is the leader's; once they say their copies are complete, their event
// logs (GET /v1/events with root's token over TCP) are the leader's,
// which nobody's token may not read on them (403). After the members
// stop, their events.db files are the leader's, event for event (the
// cluster's keys included; a follower may lack the very last event, not
// yet known committed), and `xce sim verify` on the new member's
// directory finds no difference.
func TestGapFill(t *testing.T) {
	c := prepare(t, "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: firstfit}\n")
	c.useTLS()
	t.Setenv("XCE_CA", c.ca) // the TCP clients' trust
	c.extra = []string{"--raft-snapshot-threshold", "16", "--raft-snapshot-interval", "50ms"}
	const joiner = 3
	// The joiner's addresses are taken right before it starts (below): a
	// free port taken earlier may be some connection's by then.
	c.raft, c.apis = append(slices.Clip(c.raft), ""), append(slices.Clip(c.apis), "")
	c.procs, c.done = append(c.procs, nil), append(c.done, nil)
	first := strings.Join(c.raft[:3], ",")
	c.raftArgs = func(i int) []string {
		if i == joiner {
			return []string{"--raft", c.raft[i]}
		}
		return []string{"--raft", c.raft[i], "--peers", first}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i := range c.procs {
				data, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprint("m", i, ".log")))
				t.Logf("member %d's output:\n%s", i, data)
			}
		}
	})
	for i := range 3 {
		c.start(i)
	}
	cl := c.dial()
	l := c.leader(cl)
	tokens := map[string]string{}
	for _, u := range []string{"root", "nobody"} {
		tok, err := cl.Token(context.Background(), u, time.Hour)
		if err != nil {
			t.Fatalf("a token for %s: %v", u, err)
		}
		tokens[u] = filepath.Join(c.dir, u+".token")
		if err := os.WriteFile(tokens[u], []byte(tok.Token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	submit := func(n int, prefix string) {
		t.Helper()
		for k := range n {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			rep, err := cl.Submit(ctx, []api.JobRequest{{Name: fmt.Sprint(prefix, k), TasksMin: 1, TasksMax: 1, Command: []string{"/bin/true"}, Cwd: "/"}})
			if err == nil && k%5 == 0 {
				err = cl.Kill(ctx, rep.IDs[0]) // a history of two events
			}
			cancel()
			if err != nil {
				t.Fatalf("submit %s%d: %v", prefix, k, err)
			}
			ids = append(ids, rep.IDs[0])
		}
	}
	submit(20, "before")
	f := (l + 1) % 3
	c.stop(f)
	stoppedAt := c.lastIndex(cl, l)
	submit(40, "while-down")
	// The leader compacts its raft log beyond what the stopped follower
	// has (a snapshot 16 entries further: 16 trail it).
	c.waitSnapshot(l, stoppedAt+17)
	c.start(f)
	for c.raft[joiner] == "" {
		more := freeAddrs(t, 2)
		if !slices.Contains(c.raft, more[0]) && !slices.Contains(c.apis, more[0]) && !slices.Contains(c.raft, more[1]) && !slices.Contains(c.apis, more[1]) {
			c.raft[joiner], c.apis[joiner] = more[0], more[1]
		}
	}
	c.start(joiner)
	out, err := exec.Command(xceBin, "server", "join", c.raft[joiner], "--server", c.sockets()).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != c.raft[joiner]+": joined" {
		t.Fatalf("xce server join %s: %v: %s", c.raft[joiner], err, out)
	}
	lc, err := client.Open(filepath.Join(c.data(l), "xce.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	for _, id := range ids {
		h, err := lc.History(context.Background(), fmt.Sprint(id))
		if err != nil {
			t.Fatalf("job %d's history on the leader: %v", id, err)
		}
		want[id] = mustJSON(t, h)
	}
	// Through either restored member, while it fills its copy or after:
	// a history it answers is the leader's (it may not know a job yet).
	for _, m := range []int{joiner, f} {
		c.sameHistories(m, want)
	}
	submit(10, "after")
	for _, m := range []int{f, joiner} {
		c.waitLog(m, "is complete again")
		if !c.logHas(m, "restored from a raft snapshot") {
			t.Errorf("member %d was not restored from a raft snapshot beyond its copy: the test did not test the gap", m)
		}
	}
	for _, id := range ids[len(ids)-10:] {
		h, err := lc.History(context.Background(), fmt.Sprint(id))
		if err != nil {
			t.Fatalf("job %d's history on the leader: %v", id, err)
		}
		want[id] = mustJSON(t, h)
	}
	// The leader's loop may still record a cycle for the last jobs: the
	// logs are compared until they agree, and the length they agreed at
	// is what the files must hold at least.
	agreed := map[int]int{}
	for _, m := range []int{f, joiner} {
		c.sameHistories(m, want)
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			got, lead := c.events(m, tokens["root"]), c.events(l, tokens["root"])
			if got == lead {
				var all []json.RawMessage
				_ = json.Unmarshal([]byte(got), &all)
				agreed[m] = len(all)
				break
			}
			if time.Now().After(end) {
				t.Fatalf("member %d's event log (GET /v1/events) is not the leader's: %s", m, firstDiff(got, lead))
			}
		}
		nobody, err := client.Open(c.url(m), tokens["nobody"])
		if err != nil {
			t.Fatal(err)
		}
		var e *api.Error
		if _, err := nobody.Events(context.Background(), 1, 10); !errors.As(err, &e) || e.Status != http.StatusForbidden {
			t.Errorf("nobody's GET /v1/events on member %d: %v, want 403", m, err)
		}
	}
	// The followers stop first (the leader, stopped last, has no quorum
	// left to elect another, which would add its own start to the logs).
	for _, m := range []int{f, joiner, 3 - l - f} {
		c.stop(m)
	}
	c.stop(l)
	// A follower may lack the leader's last event (one it had not heard
	// was committed when it stopped), nothing before.
	lead := readLog(t, filepath.Join(c.data(l), "events.db"))
	for _, m := range []int{f, joiner} {
		got := readLog(t, filepath.Join(c.data(m), "events.db"))
		n := min(len(got), len(lead))
		if mustJSON(t, got[:n]) != mustJSON(t, lead[:n]) || len(got) > len(lead) || n < agreed[m] || len(lead)-n > 1 {
			t.Errorf("member %d's events.db (%d events) is not the leader's (%d; %d agreed through the API)", m, len(got), len(lead), agreed[m])
		}
	}
	out, err = exec.Command(xceBin, "sim", "verify", "--data", c.data(joiner)).CombinedOutput()
	if err != nil {
		t.Errorf("xce sim verify on the joined member: %v\n%s", err, out)
	}
	for i := range c.procs {
		if c.logHas(i, "DATA RACE") { // a race-detector build (XCE_HA_BIN)
			t.Errorf("member %d's output reports a data race", i)
		}
	}
	t.Logf("%d jobs; sim verify on the joined member: %s", len(ids), lastLine(string(out)))
}

// firstDiff says where two JSON arrays of events first differ.
func firstDiff(a, b string) string {
	var x, y []json.RawMessage
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return "not JSON arrays"
	}
	for i := range min(len(x), len(y)) {
		if string(x[i]) != string(y[i]) {
			return fmt.Sprintf("event %d of %d and %d: %s, the leader's %s", i+1, len(x), len(y), x[i], y[i])
		}
	}
	if len(x) > len(y) {
		return fmt.Sprintf("%d events, the leader's %d; the last %s", len(x), len(y), x[len(x)-1])
	}
	return fmt.Sprintf("%d events, the leader's %d", len(x), len(y))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastIndex returns member i's last raft index, as it says (bounded).
func (c *cluster) lastIndex(cl *client.Client, i int) uint64 {
	c.t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		ms, _ := cl.Members(context.Background())
		for _, m := range ms {
			if m.Raft == c.raft[i] {
				return m.LastIndex
			}
		}
	}
	c.t.Fatalf("member %d did not say its last index within 10 s", i)
	return 0
}

// waitSnapshot waits (at most 20 s) until member i has a raft snapshot at
// raft index at least index (raft's file snapshot store keeps them in
// DATA/raft/snapshots/snapshots/TERM-INDEX-MS).
func (c *cluster) waitSnapshot(i int, index uint64) {
	c.t.Helper()
	var got uint64
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		des, _ := os.ReadDir(filepath.Join(c.data(i), "raft", "snapshots", "snapshots"))
		for _, de := range des {
			var term, at, ms uint64
			if n, _ := fmt.Sscanf(de.Name(), "%d-%d-%d", &term, &at, &ms); n == 3 && !strings.HasSuffix(de.Name(), ".tmp") {
				got = max(got, at)
			}
		}
		if got >= index {
			return
		}
	}
	c.t.Fatalf("member %d has no raft snapshot at %d or beyond after 20 s (its last at %d)", i, index, got)
}

// logHas reports whether member i's output has a line containing s.
func (c *cluster) logHas(i int, s string) bool {
	data, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprint("m", i, ".log")))
	return strings.Contains(string(data), s)
}

// waitLog waits (at most 20 s) until member i's output has a line
// containing s.
func (c *cluster) waitLog(i int, s string) {
	c.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if c.logHas(i, s) {
			return
		}
	}
	c.t.Fatalf("member %d did not log %q within 20 s", i, s)
}

// sameHistories reads every job's history through member i's socket
// until each one answers (at most 20 s in all), and fails the test on
// one that is not want's.
func (c *cluster) sameHistories(i int, want map[int64]string) {
	c.t.Helper()
	mc, err := client.Open(filepath.Join(c.data(i), "xce.sock"), "")
	if err != nil {
		c.t.Fatal(err)
	}
	end := time.Now().Add(20 * time.Second)
	for id, w := range want {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			h, err := mc.History(ctx, fmt.Sprint(id))
			cancel()
			if err == nil {
				if got := mustJSON(c.t, h); got != w {
					c.t.Fatalf("job %d's history through member %d:\n%s\nthe leader's:\n%s", id, i, got, w)
				}
				break
			}
			if time.Now().After(end) {
				c.t.Fatalf("job %d's history through member %d: %v", id, i, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// events returns member i's whole event log as GET /v1/events pages it,
// over TCP with the token in tokenFile (as JSON).
func (c *cluster) events(i int, tokenFile string) string {
	c.t.Helper()
	mc, err := client.Open(c.url(i), tokenFile)
	if err != nil {
		c.t.Fatal(err)
	}
	var all []json.RawMessage
	for from := uint64(1); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rep, err := mc.Events(ctx, from, api.MaxEventsPage)
		cancel()
		if err != nil {
			c.t.Fatalf("member %d's events from %d: %v", i, from, err)
		}
		for _, e := range rep.Events {
			all = append(all, json.RawMessage(mustJSON(c.t, e)))
		}
		from += uint64(len(rep.Events))
		if len(rep.Events) == 0 || from > rep.Last {
			return mustJSON(c.t, all)
		}
	}
}
