package event

import (
	"errors"
	"reflect"
	"testing"
)

// TestRoundTrip: every event type survives Encode and Decode unchanged.
func TestRoundTrip(t *testing.T) {
	events := []Event{
		{Index: 1, At: 5, Type: JobSubmitted, Submit: &Submit{Job: 1, User: "alice", UID: 1000, GID: 1000, Queue: "normal", TasksMin: 2, TasksMax: 4,
			ResReq: "span[ptile=2]", Estimate: 600, Command: []string{"sh", "-c", "echo hi"}, Cwd: "/home/alice", Env: []string{"A=b"}, Stdout: "out.%J", Rerunnable: true}},
		{Index: 2, At: 6, Type: CycleDecided, Cycle: &Cycle{Number: 1, Now: 0,
			Started:  []Placement{{Job: 1, Attempt: 1, Hosts: []HostAlloc{{Host: "h1", Slots: 2, Res: map[string]float64{"mem": 100}}}, Shared: map[string]float64{"lic": 1}}},
			Pending:  []Pending{{Job: 2, Reason: "LimitReached", Detail: "L"}},
			Reserved: []Reservation{{Job: 2, Start: 60, Hosts: []HostAlloc{{Host: "h1", Slots: 4}}}}}},
		{Index: 3, At: 7, Type: JobStarted, Started: &Started{Job: 1, Attempt: 1, Host: "h1", PID: 4242}},
		{Index: 4, At: 8, Type: JobFinished, Finished: &Finished{Job: 1, Attempt: 1, ExitCode: 0, Signal: "SIGKILL", Reason: "killed"}},
		{Index: 5, At: 9, Type: JobKilled, Killed: &Killed{Job: 1, By: "root"}},
		{Index: 6, At: 10, Type: HostRegistered, Host: &Host{Name: "h1"}},
		{Index: 7, At: 11, Type: HostLost, Host: &Host{Name: "h1", Reason: "no heartbeat for 30s"}},
		{Index: 8, At: 12, Type: HostClosed, Host: &Host{Name: "h1"}},
		{Index: 9, At: 13, Type: HostOpened, Host: &Host{Name: "h1"}},
		{Index: 10, At: 14, Type: ConfigReloaded, Config: &Config{Text: "hosts: []\n"}},
	}
	for _, e := range events {
		data, err := Encode(&e)
		if err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
		got, skip, err := Decode(data)
		if err != nil || skip {
			t.Fatalf("%s: decode: %v (skip %v)", e.Type, err, skip)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("%s: got %+v, want %+v", e.Type, got, e)
		}
	}
}

// TestUnknownAndMismatched: an unknown type stops the reader unless it may
// be skipped; a payload that is not the type's, or two payloads, are
// refused on both sides.
func TestUnknownAndMismatched(t *testing.T) {
	if _, _, err := Decode([]byte(`{"index": 3, "type": "job.teleported", "host": {"name": "h"}}`)); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown type: %v, want ErrUnknown", err)
	}
	e, skip, err := Decode([]byte(`{"index": 3, "type": "job.teleported", "skip_ok": true}`))
	if err != nil || !skip || e.Index != 3 {
		t.Errorf("skippable unknown type: %+v skip %v err %v", e, skip, err)
	}
	for _, bad := range []string{
		`{"index": 1, "type": "job.killed", "host": {"name": "h"}}`,
		`{"index": 1, "type": "job.killed", "killed": {"job": 1}, "host": {"name": "h"}}`,
		`{"index": 1, "type": "job.killed"}`,
		`{"index": 1, "type": "job.killed", "killed": `,
	} {
		if _, _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
	if _, err := Encode(&Event{Type: JobStarted, Killed: &Killed{Job: 1}}); err == nil {
		t.Error("Encode took a payload of another type")
	}
}
