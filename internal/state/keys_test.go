package state

import (
	"strings"
	"testing"

	"github.com/xce-sched/xce/internal/event"
)

// TestKeys folds a replicated control plane's keys, refuses malformed
// ones, and keeps them through a snapshot.
func TestKeys(t *testing.T) {
	s := New()
	key := strings.Repeat("ab", 32)
	bad := []event.Keys{{SigningKey: "abc", AgentToken: "t"}, {SigningKey: key}, {SigningKey: strings.Repeat("zz", 32), AgentToken: "t"}}
	for _, k := range bad {
		if err := s.Apply(event.Event{Index: 1, Type: event.ClusterKeys, Keys: &k}); err == nil {
			t.Fatalf("keys %+v taken", k)
		}
	}
	if err := s.Apply(event.Event{Index: 1, Type: event.ClusterKeys, Keys: &event.Keys{SigningKey: key, AgentToken: "tok"}}); err != nil {
		t.Fatal(err)
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Index != 1 || r.Keys == nil || *r.Keys != (event.Keys{SigningKey: key, AgentToken: "tok"}) {
		t.Fatalf("restored %+v", r)
	}
}
