package cluster

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseConfig: a configuration with a server section gives the
// cluster and the settings; without one, the defaults (20ms, 30s, 10s,
// no admins, root's jobs refused).
func TestParseConfig(t *testing.T) {
	text := `hosts: [{name: h1, slots: 4}]
queues: [{name: normal}]
server:
  admins: [alice, bob]
  cycle_interval: 50ms
  heartbeat_timeout: 1m
  kill_grace: 2s
  allow_root_jobs: true
  private_jobs: true
`
	c, s, err := ParseConfig("c.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := &Server{Admins: []string{"alice", "bob"}, CycleInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Minute, KillGrace: 2 * time.Second, AllowRootJobs: true, PrivateJobs: true}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("server %+v, want %+v", s, want)
	}
	if len(c.Hosts) != 1 || c.Hosts[0].Slots != 4 || len(c.Jobs) != 0 {
		t.Errorf("cluster %+v", c.Hosts)
	}
	_, s, err = ParseConfig("c.yaml", []byte("hosts: [{name: h1, slots: 4}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Server{CycleInterval: 20 * time.Millisecond, HeartbeatTimeout: 30 * time.Second, KillGrace: 10 * time.Second}); !reflect.DeepEqual(*s, want) {
		t.Errorf("defaults %+v, want %+v", *s, want)
	}
}

// TestParseConfigErrors: each error names the file, line, column and field.
func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"hosts: [{name: h1, slots: 4}]\njobs:\n  - {id: 1}\n", "c.yaml:2:1: jobs: a cluster's configuration holds no jobs"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  cycle_interval: 20\n", "c.yaml:3:19: server.cycle_interval: expected a string"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  cycle_interval: 20 ms\n", "c.yaml:3:19: server.cycle_interval: want a duration from 1ms to 24h"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  kill_grace: 48h\n", "c.yaml:3:15: server.kill_grace: want a duration from 1ms to 24h"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  allow_root_jobs: yes please\n", "c.yaml:3:20: server.allow_root_jobs: want true or false"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  admin: [a]\n", "c.yaml:3:3: server.admin: unknown field"},
		{"hosts: [{name: h1, slots: 4}]\nserver:\n  admins: [\"a b\"]\n", "c.yaml:3:12: server.admins[0]"},
	} {
		_, _, err := ParseConfig("c.yaml", []byte(tc.text))
		var se *ScenarioError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s…", tc.text, err, tc.want)
		}
	}
}
