package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLimitsCommand: per-user instances are shown by user, a limit no job
// falls under once with nothing used. Worked by hand: alice's three 1-slot
// jobs and bob's two; per-user slots 2; alice uses 2/2 (her third job
// pends), bob 2/2; the queue limit of 10 jobs on queue "other" is unused.
func TestLimitsCommand(t *testing.T) {
	scenario := `hosts:
  - {name: h1, slots: 8}
queues:
  - {name: normal}
  - {name: other}
limits:
  - {name: per_user_slots, per_user: all, slots: 2}
  - {name: other_jobs, queues: [other], jobs: 10}
jobs:
  - {id: 1, user: alice}
  - {id: 2, user: alice}
  - {id: 3, user: alice}
  - {id: 4, user: bob}
  - {id: 5, user: bob}
`
	f := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(f, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `{"limits": [
  {"name": "per_user_slots", "users": "alice", "queues": "-", "hosts": "-", "projects": "-", "usage": {"slots": {"used": 2, "max": 2}}},
  {"name": "per_user_slots", "users": "bob", "queues": "-", "hosts": "-", "projects": "-", "usage": {"slots": {"used": 2, "max": 2}}},
  {"name": "other_jobs", "users": "-", "queues": "other", "hosts": "-", "projects": "-", "usage": {"jobs": {"used": 0, "max": 10}}}
]}
`
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"limits", "--json", f}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
