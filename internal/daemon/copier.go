package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/auth"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/store"
)

// Filling a member's local copy of the event log from another member
// (docs/ha.md, "The local copy of the event log").
const (
	// FillTimeout bounds one request for a page of events to a member.
	FillTimeout = 20 * time.Second
	// FillRetryMin and FillRetryMax bound the wait before the next
	// attempt after a failed one: it doubles from the least to the most.
	FillRetryMin = 100 * time.Millisecond
	FillRetryMax = 30 * time.Second
	// FillTokenTTL is the lifetime of the token a member makes to read
	// another member's event log with (an administrator's, with the
	// replicated signing key).
	FillTokenTTL = 60 * time.Second
)

// copier keeps the member's local copy of the replicated event log (the
// store in the data directory), which the API's job histories, the
// dashboard and `xce sim verify` read: every applied event it does not
// have yet, in order, appended from raft's apply path (apply).
//
// A member restored from a raft snapshot beyond its copy (it joined a
// running cluster, or was down while the leader compacted its log) lacks
// the events the snapshot folded: the copy has a gap. Then apply only
// notes how far the replicated state went, and run fills the copy in the
// background from another member's API (GET /v1/events, fetch), checking
// each page, until it reaches what was applied; apply appends again after
// that. While the copy has a gap, gapped is true: the member sends the
// reads of the copy elsewhere (member.handler).
type copier struct {
	log  *store.Store
	logf func(format string, args ...any)
	// fetch returns the events from index from on (at most limit of them)
	// read from another member, and that member's API address. keys
	// returns the replicated state's shared secrets (nil: none yet). Both
	// are set before run starts; apply and restored do not use them.
	fetch func(ctx context.Context, from uint64, limit int) ([]event.Event, string, error)
	keys  func() *event.Keys

	gap  atomic.Bool
	mu   sync.Mutex // apply's and restored's, and the end of a gap
	want uint64     // while gap: the index of the last event applied
	wake chan struct{}
}

// newCopier returns the copier of the local copy log.
func newCopier(log *store.Store, logf func(format string, args ...any)) *copier {
	return &copier{log: log, logf: logf, wake: make(chan struct{}, 1)}
}

func (c *copier) printf(format string, args ...any) {
	if c.logf != nil {
		c.logf(format, args...)
	}
}

// gapped reports whether the copy lacks events the replicated state has
// folded (a gap being filled).
func (c *copier) gapped() bool { return c.gap.Load() }

// startGap (c.mu held) marks the copy as lacking the events after its
// last one up to want, and wakes run.
func (c *copier) startGap(want uint64, why string) {
	c.gap.Store(true)
	c.want = want
	c.printf("the local copy of the event log ends at event %d, %s: filling it from another member (meanwhile job histories and the event log are read on the leader, or another member)", c.log.Last(), why)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// apply appends the events the copy lacks (replica.Config.OnApply; raft's
// FSM goroutine: it does no network I/O).
func (c *copier) apply(events []event.Event) {
	if len(events) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	top := events[len(events)-1].Index
	if c.gap.Load() {
		c.want = max(c.want, top)
		return
	}
	var add []event.Event
	for _, e := range events {
		last := c.log.Last() + uint64(len(add))
		if e.Index <= last {
			continue
		}
		if e.Index != last+1 {
			_ = c.appendNow(add) // what comes before; the gap is filled after it
			c.startGap(top, fmt.Sprintf("and event %d comes next", e.Index))
			return
		}
		if err := e.Check(); err != nil {
			_ = c.appendNow(add) // what comes before; the gap is filled after it
			c.startGap(top, fmt.Sprintf("and event %d cannot be stored: %v", e.Index, err))
			return
		}
		add = append(add, e)
	}
	if err := c.appendNow(add); err != nil {
		c.startGap(top, fmt.Sprintf("and appending to it failed: %v", err))
	}
}

// appendNow appends events (c.mu held, no gap).
func (c *copier) appendNow(events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	_, err := c.log.Append(context.Background(), events...)
	return err
}

// restored is told that the replicated state was replaced by a raft
// snapshot's, whose last event is index (replica.Config.OnRestore): the
// copy has a gap when it ends before.
func (c *copier) restored(index uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.gap.Load():
		c.want = max(c.want, index)
	case index > c.log.Last():
		c.startGap(index, fmt.Sprintf("and the state was restored from a raft snapshot at event %d", index))
	}
}

// run fills every gap of the copy until ctx ends.
func (c *copier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.fill(ctx)
	}
}

// fill copies the events the copy lacks from other members, one page at a
// time, until it holds every event applied (then apply appends again) or
// ctx ends. A failed attempt is tried again after FillRetryMin, doubling
// up to FillRetryMax; attempts 1, 2, 4, 8, ... of a run of failures are
// logged.
func (c *copier) fill(ctx context.Context) {
	began, from := time.Now(), c.log.Last()+1
	wait, fails, pages := FillRetryMin, 0, 0
	sources := map[string]bool{}
	for ctx.Err() == nil {
		c.mu.Lock()
		want, last := c.want, c.log.Last()
		if !c.gap.Load() {
			c.mu.Unlock()
			return
		}
		if last >= want {
			c.gap.Store(false)
			c.mu.Unlock()
			c.printf("the local copy of the event log is complete again: events %d to %d copied from %v in %d pages (%v); it follows the replicated log again",
				from, last, keysOf(sources), pages, time.Since(began).Round(time.Millisecond))
			return
		}
		c.mu.Unlock()
		err := c.page(ctx, last+1, int(min(want-last, api.MaxEventsPage)), sources)
		if err == nil {
			wait, fails = FillRetryMin, 0
			pages++
			continue
		}
		if ctx.Err() != nil {
			return
		}
		fails++
		if fails&(fails-1) == 0 {
			c.printf("filling the local copy of the event log from event %d (attempt %d, again in %v): %v", last+1, fails, wait, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, FillRetryMax)
	}
}

// page fetches the events from index from on (at most limit), checks them
// (checkPage), gives a cluster.keys event its keys (fillKeys) and appends
// them to the copy.
func (c *copier) page(ctx context.Context, from uint64, limit int, sources map[string]bool) error {
	fctx, cancel := context.WithTimeout(ctx, FillTimeout)
	defer cancel()
	events, src, err := c.fetch(fctx, from, limit)
	if err != nil {
		return err
	}
	if err := checkPage(from, events); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := fillKeys(events, c.keys()); err != nil {
		return err
	}
	if last := c.log.Last(); last+1 != from {
		return fmt.Errorf("the local copy ends at %d, not %d", last, from-1) // only fill appends during a gap
	}
	idx, err := c.log.Append(ctx, events...)
	if err != nil {
		return fmt.Errorf("append to the local copy: %w", err)
	}
	if idx[0] != from {
		return fmt.Errorf("the local copy stored event %d as %d", from, idx[0])
	}
	sources[src] = true
	return nil
}

// checkPage checks a page of events read from another member: one event
// at least, indexed from, from+1, ... (none missing, none twice, in
// order), each with exactly its type's payload (event.Event.Check).
func checkPage(from uint64, events []event.Event) error {
	if len(events) == 0 {
		return fmt.Errorf("no event %d", from)
	}
	for i, e := range events {
		if want := from + uint64(i); e.Index != want {
			return fmt.Errorf("event %d of the page is event %d, want %d", i+1, e.Index, want)
		}
		if err := e.Check(); err != nil {
			return fmt.Errorf("event %d: %w", e.Index, err)
		}
	}
	return nil
}

// fillKeys gives the cluster.keys events of a page their keys, which GET
// /v1/events never shows (the page carries empty ones): the replicated
// state's, keys. The cluster's keys are written once, by its first leader
// (member.keys), so the state's are that event's, and the copy is the
// same as the other members'. The keys never cross the network for it.
func fillKeys(events []event.Event, keys *event.Keys) error {
	for i := range events {
		e := &events[i]
		if e.Type != event.ClusterKeys || e.Keys == nil || *e.Keys != (event.Keys{}) {
			continue
		}
		if keys == nil {
			return fmt.Errorf("event %d: the cluster's keys, and the replicated state has none", e.Index)
		}
		k := *keys
		e.Keys = &k
	}
	return nil
}

// keysOf returns the keys of set in order, for a log line.
func keysOf(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }

// peerLog reads other members' event logs through their API (GET
// /v1/events, an administrator's request) over their TCP listeners, with
// the forwarder's client and TLS trust: over TLS, the member's
// certificate is checked as the leader's is when a write is forwarded;
// without TLS, only to a loopback address.
type peerLog struct {
	fwd *forwarder
	// addrs returns the API addresses of the members to ask, in order
	// (the leader's first), this member's own excluded.
	addrs func() []string
}

// events returns the events from index from on, at most limit of them, of
// the first member of addrs that has event from, and its address.
func (p *peerLog) events(ctx context.Context, from uint64, limit int) ([]event.Event, string, error) {
	iss, _ := p.fwd.issuer()
	if iss == nil {
		return nil, "", errors.New("the replicated state has no signing key yet")
	}
	addrs := p.addrs()
	if len(addrs) == 0 {
		return nil, "", errors.New("no other member's API address is known yet (the leader's is recorded when it starts leading)")
	}
	var errs []error
	for _, a := range addrs {
		if !p.fwd.reachable(a) {
			errs = append(errs, fmt.Errorf("%s: not asked: over TLS to an address that names a host, else on loopback only", a))
			continue
		}
		events, err := p.page(ctx, iss, a, from, limit)
		if err == nil {
			return events, a, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", errors.Join(errs...)
}

// errTooLarge is a page over maxForwardReply bytes.
var errTooLarge = errors.New("too large")

// page asks the member at addr for the events from index from on: with
// at most limit events, then half as many while the answer is over
// maxForwardReply bytes.
func (p *peerLog) page(ctx context.Context, iss *auth.Issuer, addr string, from uint64, limit int) ([]event.Event, error) {
	for {
		events, err := p.get(ctx, iss, addr, from, limit)
		if !errors.Is(err, errTooLarge) || limit == 1 {
			return events, err
		}
		limit /= 2
	}
}

// get sends one GET /v1/events to addr with a token for root (an
// administrator on every member), made with the replicated key for
// FillTokenTTL.
func (p *peerLog) get(ctx context.Context, iss *auth.Issuer, addr string, from uint64, limit int) ([]event.Event, error) {
	tok, err := iss.Issue(auth.Identity{User: "root", UID: 0, GID: 0}, FillTokenTTL)
	if err != nil {
		return nil, fmt.Errorf("a token to read %s's event log: %w", addr, err)
	}
	q := url.Values{"from": {strconv.FormatUint(from, 10)}, "limit": {strconv.Itoa(limit)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.fwd.scheme+"://"+addr+"/v1/events?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := p.fwd.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardReply+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", addr, err)
	case len(data) > maxForwardReply:
		return nil, fmt.Errorf("%s: %d events over %d bytes: %w", addr, limit, maxForwardReply, errTooLarge)
	case resp.StatusCode != http.StatusOK:
		var e api.Error
		if json.Unmarshal(data, &e) != nil || e.Msg == "" {
			e.Msg = resp.Status
		}
		return nil, fmt.Errorf("%s: %d: %s", addr, resp.StatusCode, e.Msg)
	}
	var rep api.EventsReply
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	if len(rep.Events) == 0 {
		return nil, fmt.Errorf("%s: has no event %d yet (its log ends at %d)", addr, from, rep.Last)
	}
	return rep.Events, nil
}
