package cluster

import (
	"time"
)

// Server is the `server:` section of a live cluster's configuration
// (docs/daemon.md): who administers it and the server's timings.
type Server struct {
	// Admins may act on every job and host; root always may.
	Admins []string
	// CycleInterval is the least time between two scheduling cycles
	// (events arriving closer together share one cycle); default 20ms.
	CycleInterval time.Duration
	// HeartbeatTimeout: an agent silent this long makes its host
	// unavail; default 30s.
	HeartbeatTimeout time.Duration
	// KillGrace: after SIGINT and SIGTERM, how long a killed job has
	// before SIGKILL; default 10s.
	KillGrace time.Duration
	// AllowRootJobs lets root's jobs run (as root); default false.
	AllowRootJobs bool
	// PrivateJobs: users see only their own jobs (administrators see all);
	// default false, every user sees every job (LSF's bjobs -u all).
	PrivateJobs bool
}

// DefaultServer returns the server section's defaults.
func DefaultServer() Server {
	return Server{CycleInterval: 20 * time.Millisecond, HeartbeatTimeout: 30 * time.Second, KillGrace: 10 * time.Second}
}

// configKeys are the top-level keys of a live cluster's configuration.
var configKeys = []string{"hosts", "host_groups", "user_groups", "shared", "queues", "limits", "max_array_size", "reservation_usage", "slurm", "server"}

// ParseConfig parses a live cluster's configuration (docs/daemon.md): the
// scenario format (docs/scenario.md) without jobs — a `jobs` key is an
// error naming its line, since a live cluster's jobs are submitted — plus
// an optional `server` section, whose durations are written as Go writes
// them ("20ms", "30s"; each at least 1ms and at most 24h). Errors are
// *ScenarioError values naming the file, line, column and field, with the
// same bounds on input as Parse.
func ParseConfig(file string, data []byte) (*Cluster, *Server, error) {
	l := &loader{file: file, budget: 1_000_000 + 10*len(data), config: true}
	root, err := l.parseYAML(data)
	if err != nil {
		return nil, nil, err
	}
	c, err := l.load(root)
	if err != nil {
		return nil, nil, err
	}
	return c, l.server, nil
}

// loadServer reads the server section of a configuration into l.server.
func (l *loader) loadServer(top *fieldSet) error {
	s := DefaultServer()
	l.server = &s
	if !l.has(top, "server") {
		return nil
	}
	fs, err := l.fields(top.m["server"].val, "server", []string{"admins", "cycle_interval", "heartbeat_timeout", "kill_grace", "allow_root_jobs", "private_jobs"})
	if err != nil {
		return err
	}
	if l.has(fs, "admins") {
		e := fs.m["admins"]
		names, _, err := l.nameList(e.val, e.path, "user", func(string) bool { return true }, "")
		if err != nil {
			return err
		}
		s.Admins = names
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"cycle_interval", &s.CycleInterval}, {"heartbeat_timeout", &s.HeartbeatTimeout}, {"kill_grace", &s.KillGrace}} {
		if !l.has(fs, d.name) {
			continue
		}
		text, n, err := l.toStr(fs.m[d.name].val, fs.m[d.name].path)
		if err != nil {
			return err
		}
		v, err := time.ParseDuration(text)
		if err != nil || v < time.Millisecond || v > 24*time.Hour {
			return l.errAt(n, fs.m[d.name].path, "want a duration from 1ms to 24h as Go writes it (\"20ms\", \"30s\"), got %s", quoteValue(text))
		}
		*d.to = v
	}
	for _, f := range []struct {
		name string
		to   *bool
	}{{"allow_root_jobs", &s.AllowRootJobs}, {"private_jobs", &s.PrivateJobs}} {
		if err := l.boolField(fs, f.name, f.to); err != nil {
			return err
		}
	}
	return nil
}
