package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/xce-sched/xce/internal/event"
)

// model is what the store should hold: a slice and three numbers.
type model struct {
	log       []event.Event // log[i-1] is event i, compacted ones too
	compacted uint64
	snap      uint64 // 0: none
	snapData  []byte
	closed    bool
}

func (m *model) last() uint64 { return uint64(len(m.log)) }

// drawEvents draws 0 to 4 events of any type.
func drawEvents(t *rapid.T, label string) []event.Event {
	pool := everyType()
	n := rapid.IntRange(0, 4).Draw(t, label+" size")
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = pool[rapid.IntRange(0, len(pool)-1).Draw(t, label+" type")]
		evs[i].At = rapid.Int64().Draw(t, label+" at")
	}
	return evs
}

// TestModel: random sequences of Append (one call or a few concurrent
// ones), Close, Open, SaveSnapshot, Compact, Read and Event do to the
// store what they do to the model.
func TestModel(t *testing.T) {
	base := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(base, "")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "log.db")
		s, err := Open(path, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { s.Close() }()
		m := &model{}
		ctx := context.Background()
		closedOr := func(what string, err error, want error) {
			if m.closed {
				want = ErrClosed
			}
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				rt.Fatalf("%s: %v, want %v", what, err, want)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"append": func(t *rapid.T) {
				evs := drawEvents(t, "append")
				got, err := s.Append(ctx, evs...)
				if m.closed {
					closedOr("Append", err, nil)
					return
				}
				want := []uint64(nil)
				for i := range evs {
					want = append(want, m.last()+uint64(i)+1)
				}
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("Append of %d: %v, %v; want %v", len(evs), got, err, want)
				}
				m.log = append(m.log, indexed(m.last()+1, evs)...)
			},
			"concurrent appends": func(t *rapid.T) {
				if m.closed {
					t.Skip("closed")
				}
				calls := make([][]event.Event, rapid.IntRange(2, 4).Draw(t, "calls"))
				for c := range calls {
					calls[c] = drawEvents(t, "call")
				}
				got := make([][]uint64, len(calls))
				var wg sync.WaitGroup
				for c := range calls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var err error
						if got[c], err = s.Append(ctx, calls[c]...); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				order := []int{}
				for c := range calls {
					if len(calls[c]) > 0 {
						order = append(order, c)
					}
				}
				slices.SortFunc(order, func(a, b int) int { return int(got[a][0]) - int(got[b][0]) })
				for _, c := range order {
					want := indexed(m.last()+1, calls[c])
					for i, e := range want {
						if got[c][i] != e.Index {
							t.Fatalf("call %d got %v, want from %d", c, got[c], want[0].Index)
						}
					}
					m.log = append(m.log, want...)
				}
			},
			"close": func(t *rapid.T) {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				m.closed = true
			},
			"open": func(t *rapid.T) {
				if !m.closed {
					t.Skip("open")
				}
				if s, err = Open(path, Options{}); err != nil {
					t.Fatal(err)
				}
				m.closed = false
			},
			"save snapshot": func(t *rapid.T) {
				i := rapid.Uint64Range(0, m.last()+1).Draw(t, "index")
				data := rapid.SliceOf(rapid.Byte()).Draw(t, "data")
				err := s.SaveSnapshot(i, data)
				if !m.closed && (i == 0 || i > m.last() || i < m.snap) {
					if err == nil || errors.Is(err, ErrFailed) {
						t.Fatalf("SaveSnapshot(%d) with last %d and a snapshot at %d: %v", i, m.last(), m.snap, err)
					}
					return
				}
				closedOr("SaveSnapshot", err, nil)
				if !m.closed {
					m.snap, m.snapData = i, data
				}
			},
			"compact": func(t *rapid.T) {
				upTo := rapid.Uint64Range(0, m.last()+1).Draw(t, "up to")
				err := s.Compact(upTo)
				if !m.closed && upTo > m.snap {
					if err == nil || errors.Is(err, ErrFailed) {
						t.Fatalf("Compact(%d) with a snapshot at %d: %v", upTo, m.snap, err)
					}
					return
				}
				closedOr("Compact", err, nil)
				if !m.closed {
					m.compacted = max(m.compacted, upTo)
				}
			},
			"read": func(t *rapid.T) {
				from := rapid.Uint64Range(0, m.last()+1).Draw(t, "from")
				var got []event.Event
				err := s.Read(from, func(e event.Event) error { got = append(got, e); return nil })
				if max(from, 1) <= m.compacted {
					closedOr("Read", err, ErrCompacted)
					return
				}
				closedOr("Read", err, nil)
				if m.closed {
					return
				}
				want := m.log[max(from, 1)-1:]
				if len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
					t.Fatalf("Read(%d): %d events, want %d", from, len(got), len(want))
				}
			},
			"event": func(t *rapid.T) {
				i := rapid.Uint64Range(0, m.last()+1).Draw(t, "index")
				got, err := s.Event(i)
				switch {
				case i == 0 || i > m.last():
					closedOr("Event", err, ErrNotFound)
				case i <= m.compacted:
					closedOr("Event", err, ErrCompacted)
				default:
					closedOr("Event", err, nil)
					if !m.closed && !reflect.DeepEqual(got, m.log[i-1]) {
						t.Fatalf("Event(%d) = %+v, want %+v", i, got, m.log[i-1])
					}
				}
			},
			"": func(t *rapid.T) {
				if s.Last() != m.last() {
					t.Fatalf("Last %d, model %d", s.Last(), m.last())
				}
				if m.closed {
					return
				}
				i, data, ok, err := s.Snapshot()
				if err != nil || ok != (m.snap > 0) || i != m.snap || ok && !slices.Equal(data, m.snapData) {
					t.Fatalf("Snapshot = %d %v %v %v; model %d", i, data, ok, err, m.snap)
				}
			},
		})
	})
}
