package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
)

// TestChangeOf: what each kind of event makes a page refetch.
func TestChangeOf(t *testing.T) {
	for _, c := range []struct {
		events []event.Event
		want   Change
	}{
		{[]event.Event{{Index: 3, Type: event.JobSubmitted}}, Change{Index: 3, Jobs: true}},
		{[]event.Event{{Index: 4, Type: event.CycleDecided, Cycle: &event.Cycle{}}}, Change{Index: 4, Jobs: true}},
		{[]event.Event{{Index: 5, Type: event.CycleDecided, Cycle: &event.Cycle{Started: []event.Placement{{Job: 1}}}}}, Change{Index: 5, Jobs: true, Hosts: true}},
		{[]event.Event{{Index: 6, Type: event.JobFinished}, {Index: 7, Type: event.HostClosed}}, Change{Index: 7, Jobs: true, Hosts: true}},
		{[]event.Event{{Index: 8, Type: event.HostLost}}, Change{Index: 8, Hosts: true}},
		{[]event.Event{{Index: 9, Type: event.ConfigReloaded}}, Change{Index: 9, Jobs: true, Hosts: true, Config: true}},
		{[]event.Event{{Index: 10, Type: event.ServerStarted}}, Change{Index: 10}},
	} {
		if got := changeOf(c.events); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.events[0].Type, got, c.want)
		}
	}
}

// TestBrokerNeverBlocks: the loop's notes never wait, even with no
// broker running and its buffer full; the notes dropped make the next
// message a reset. A stream that reads nothing has its messages dropped
// (counted) while the others get theirs.
func TestBrokerNeverBlocks(t *testing.T) {
	b := newBroker()
	done := make(chan struct{})
	go func() {
		for i := range 3 * notes {
			b.note([]event.Event{{Index: uint64(i + 1), Type: event.JobSubmitted}})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("notes blocked with no broker running")
	}
	if !b.lost.Load() {
		t.Fatal("no note was dropped out of 3 times the buffer")
	}
	slow, fast := b.add(), b.add()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.run(ctx)
	// The notes taken (the first notes of them) go out in one message or
	// a few; the first is a reset.
	received := 0
	for last := uint64(0); last != uint64(notes); {
		select {
		case msg := <-fast.ch:
			c := decodeChange(t, msg)
			if received == 0 && !c.Reset || !c.Jobs {
				t.Errorf("message %d %+v: want jobs, and a reset first", received, c)
			}
			received++
			last = c.Index
		case <-time.After(10 * time.Second):
			t.Fatal("the last note taken was not sent within 10 s")
		}
	}
	// The slow stream never reads: once its buffer is full, messages are
	// dropped for it, and the fast one gets them all.
	for i := range streamBuffer + 3 {
		b.note([]event.Event{{Index: uint64(10_000 + i), Type: event.HostLost}})
		select {
		case msg := <-fast.ch:
			if c := decodeChange(t, msg); c.Index != uint64(10_000+i) || !c.Hosts || c.Reset {
				t.Errorf("message %d: %+v", i, c)
			}
			received++
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d not sent within 10 s", i)
		}
	}
	if !slow.overflow.Load() || len(slow.ch) != streamBuffer {
		t.Errorf("slow stream: overflow %v, %d waiting; want true, %d", slow.overflow.Load(), len(slow.ch), streamBuffer)
	}
	if open, dropped := b.stats(); open != 2 || dropped != uint64(received-streamBuffer) {
		t.Errorf("stats: %d open, %d dropped; want 2, %d (every message but the %d the slow one's buffer took)", open, dropped, received-streamBuffer, streamBuffer)
	}
}

func decodeChange(t *testing.T, msg []byte) Change {
	t.Helper()
	s := string(msg)
	data, ok := strings.CutPrefix(s[strings.Index(s, "data: "):], "data: ")
	var c Change
	if !ok || !strings.HasPrefix(s, "event: change\n") || json.Unmarshal([]byte(strings.TrimSpace(data)), &c) != nil {
		t.Fatalf("not a change message: %q", s)
	}
	return c
}

// TestStream: a stream over HTTP says hello with the state's index, then
// a change for what the loop applies, and ends when the server stops;
// past MaxStreams, 503.
func TestStream(t *testing.T) {
	f := newFixture(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() { f.h.Run(ctx); close(runDone) }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.h.ServeHTTP(w, r.WithContext(api.WithCaller(r.Context(), api.Caller{User: "alice", UID: 1000})))
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/ui/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return ""
				}
				if strings.HasPrefix(l, "data: ") {
					return strings.TrimPrefix(l, "data: ")
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: nothing within 10 s", what)
			}
		}
	}
	if got := next("hello"); got != `{"index":13}` {
		t.Errorf("hello %q, want index 13", got)
	}
	f.h.Applied([]event.Event{{Index: 14, Type: event.JobSubmitted}})
	if got := next("change"); got != `{"index":14,"jobs":true}` {
		t.Errorf("change %q", got)
	}
	cancel()
	<-runDone
	if got := next("the end"); got != "" {
		t.Errorf("after the server stopped: %q, want the stream to end", got)
	}
	// Past MaxStreams: 503.
	for range MaxStreams {
		f.h.broker.add()
	}
	if code := f.get(t, "alice", "/ui/v1/stream", nil); code != 503 {
		t.Errorf("stream %d: status %d, want 503", MaxStreams+1, code)
	}
}
