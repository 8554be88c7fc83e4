package daemon

import (
	"fmt"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/internal/server"
)

// This file is what `xce reconfig` may change in a running server
// (docs/daemon.md, "Reloading the configuration"). The whole file is
// recorded as a config.reloaded event and the core rebuilds its
// scheduler over it; of the server section, the administrators and
// allow_root_jobs hold from that event on (live.Core.Server, read through
// server.Loop.Server), and the other keys are what the server's parts
// were built with: a file that changes one of them is refused, naming
// them, rather than reported reloaded while the old value goes on.

// restartKey is a key of the server section that only a restart applies.
type restartKey struct {
	name  string
	value func(s *cluster.Server) string
}

// restartKeys are the server section's keys a running server keeps: the
// loop's cycle interval, the agents' hub's timings, and the API's and
// the dashboard's private_jobs, all fixed when they were made.
var restartKeys = []restartKey{
	{"cycle_interval", func(s *cluster.Server) string { return s.CycleInterval.String() }},
	{"heartbeat_timeout", func(s *cluster.Server) string { return s.HeartbeatTimeout.String() }},
	{"kill_grace", func(s *cluster.Server) string { return s.KillGrace.String() }},
	{"private_jobs", func(s *cluster.Server) string { return fmt.Sprint(s.PrivateJobs) }},
}

// restartOnly returns the keys of restartKeys whose value next changes
// from running's, as "server.KEY (OLD to NEW)", in restartKeys' order.
func restartOnly(running, next *cluster.Server) []string {
	var out []string
	for _, k := range restartKeys {
		if was, is := k.value(running), k.value(next); was != is {
			out = append(out, fmt.Sprintf("server.%s (%s to %s)", k.name, was, is))
		}
	}
	return out
}

// reloadConfig reads and checks the configuration file at path for xce
// reconfig, running being the server section the server was started
// with, and returns its text. A file whose server section changes a key
// only a restart applies (restartKeys) is an error naming each such key
// with its running and its new value; nothing is then reloaded.
func reloadConfig(path string, running *cluster.Server) (string, error) {
	text, err := readConfig(path)
	if err != nil {
		return "", err
	}
	_, next, err := cluster.ParseConfig(path, []byte(text))
	if err != nil {
		return "", err
	}
	if keys := restartOnly(running, next); len(keys) > 0 {
		return "", fmt.Errorf("%s: not reloaded: %s only change when the server restarts (xce serve); restart it, or give the running value back to reload the rest (administrators and allow_root_jobs change at once)",
			path, strings.Join(keys, ", "))
	}
	return text, nil
}

// allowRootNow returns the agents' hub's AllowRootNow: the
// allow_root_jobs in force in *loop (made after the hub; xce reconfig
// changes it), else o's.
func allowRootNow(o Options, loop **server.Loop) func() bool {
	return func() bool {
		if l := *loop; l != nil {
			if s := l.Server(); s != nil {
				return s.AllowRootJobs
			}
		}
		return o.Server.AllowRootJobs
	}
}
