package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
)

// The live updates' bounds (docs/dashboard.md, "Live updates").
const (
	// MaxStreams is how many streams may be open at once; more are 503.
	MaxStreams = 256
	// Coalesce is the least time between two messages: the changes of a
	// burst of batches go out as one.
	Coalesce = 100 * time.Millisecond
	// streamBuffer is how many messages wait for one stream; when they
	// are not taken, later ones are dropped and the stream is told to
	// refetch everything once it catches up.
	streamBuffer = 8
	// notes bounds the loop's notes waiting for the broker.
	notes = 1024
	// keepAlive is how often an idle stream gets a comment line.
	keepAlive = 15 * time.Second
	// writeTimeout bounds each write to a stream.
	writeTimeout = 10 * time.Second
)

// Change is one live-update message (event "change"): the state's index
// after the changes it stands for, and what they touched, so that a page
// refetches only what it shows. Reset: changes were dropped (the page
// was too slow, or the server was): refetch everything.
type Change struct {
	Index  uint64 `json:"index"`
	Jobs   bool   `json:"jobs,omitempty"`
	Hosts  bool   `json:"hosts,omitempty"`
	Config bool   `json:"config,omitempty"`
	Reset  bool   `json:"reset,omitempty"`
}

// merge adds what o touched to c.
func (c *Change) merge(o Change) {
	c.Index = max(c.Index, o.Index)
	c.Jobs, c.Hosts, c.Config, c.Reset = c.Jobs || o.Jobs, c.Hosts || o.Hosts, c.Config || o.Config, c.Reset || o.Reset
}

// changeOf says what events touched. It reads only their types and the
// cycle's lists.
func changeOf(events []event.Event) Change {
	var c Change
	for i := range events {
		e := &events[i]
		c.Index = max(c.Index, e.Index)
		switch e.Type {
		case event.JobSubmitted, event.JobKilled, event.JobStarted:
			c.Jobs = true
		case event.JobFinished:
			c.Jobs, c.Hosts = true, true
		case event.CycleDecided:
			c.Jobs = true
			if len(e.Cycle.Started) > 0 || len(e.Cycle.Preempted) > 0 || len(e.Cycle.Resumed) > 0 {
				c.Hosts = true
			}
		case event.HostRegistered, event.HostLost, event.HostClosed, event.HostOpened:
			c.Hosts = true
		case event.ConfigReloaded:
			c.Jobs, c.Hosts, c.Config = true, true, true
		}
	}
	return c
}

// stream is one open live-update stream.
type stream struct {
	ch       chan []byte
	overflow atomic.Bool // messages were dropped: send a reset next
}

// broker takes the loop's notes (never blocking it) and sends them, at
// most one message per Coalesce, to every stream, dropping for a stream
// whose buffer is full.
type broker struct {
	in      chan Change
	lost    atomic.Bool // a note was dropped: the next message resets
	dropped atomic.Uint64
	last    atomic.Uint64 // the index of the last message sent
	done    chan struct{} // closed when run returns

	mu      sync.Mutex
	streams map[*stream]struct{}
}

func newBroker() *broker {
	return &broker{in: make(chan Change, notes), done: make(chan struct{}), streams: map[*stream]struct{}{}}
}

// note hands what events touched to the broker, or drops it (the next
// message then tells every page to refetch). It never blocks.
func (b *broker) note(events []event.Event) {
	select {
	case b.in <- changeOf(events):
	default:
		b.lost.Store(true)
	}
}

// run sends the notes until ctx ends.
func (b *broker) run(ctx context.Context) {
	defer close(b.done)
	var pending Change
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-b.in:
			pending.merge(c)
			if timer == nil {
				timer = time.After(Coalesce)
			}
		case <-timer:
			timer = nil
			if b.lost.Swap(false) {
				pending.Reset = true
			}
			b.send(pending)
			pending = Change{}
		}
	}
}

// send offers c to every stream, dropping it for those that are full.
func (b *broker) send(c Change) {
	msg := message("change", c)
	b.last.Store(max(b.last.Load(), c.Index)) // only run writes it
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.streams {
		select {
		case s.ch <- msg:
		default:
			s.overflow.Store(true)
			b.dropped.Add(1)
		}
	}
}

// message is one event of a stream: its name and data, JSON on one line.
func message(name string, v any) []byte {
	data, _ := json.Marshal(v) // plain structs: never fails
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", name, data)
}

// add registers a new stream, or returns nil when MaxStreams are open.
func (b *broker) add() *stream {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.streams) >= MaxStreams {
		return nil
	}
	s := &stream{ch: make(chan []byte, streamBuffer)}
	b.streams[s] = struct{}{}
	return s
}

func (b *broker) remove(s *stream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.streams, s)
}

func (b *broker) stats() (int, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.streams), b.dropped.Load()
}

// stream serves GET /ui/v1/stream: Server-Sent Events, a "hello" with
// the state's index, then a "change" whenever something changed (at
// most one per Coalesce), a comment line every keepAlive when idle. It
// ends when the client goes, when a write does not complete within
// writeTimeout, or when the server stops.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, _ api.Caller) {
	s := h.broker.add()
	if s == nil {
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("%d live-update streams are open: the most this server takes", MaxStreams))
		return
	}
	defer h.broker.remove(s)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout)) // not every writer has deadlines
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	var index uint64
	h.o.View(func(k *live.Core) { index = k.State.Index })
	if !write(append([]byte("retry: 2000\n"), message("hello", Change{Index: index})...)) {
		return
	}
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case msg := <-s.ch:
			if s.overflow.Swap(false) {
				// Some were dropped: drain what waits, and tell the page
				// to refetch everything.
				for len(s.ch) > 0 {
					<-s.ch
				}
				msg = message("change", Change{Index: max(index, h.broker.last.Load()), Jobs: true, Hosts: true, Reset: true})
			}
			if !write(msg) {
				return
			}
		case <-ping.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.broker.done:
			return
		}
	}
}
