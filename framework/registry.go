package framework

import (
	"fmt"
	"sort"

	"github.com/xce-sched/xce/cluster"
)

// Handle is what a plugin factory gets: the cluster and the state the
// plugin's scheduler works on. Plugins read the state; only the runner
// changes allocations in it.
type Handle struct {
	Cluster *cluster.Cluster
	State   *cluster.State
	// Queue is the queue a per-queue plugin (a picker, a policy) is built
	// for, -1 for cluster-wide plugins.
	Queue cluster.QueueID
	// Jobs finds the scheduler's jobs.
	Jobs Lookup
}

// Factory builds a plugin instance for one scheduler.
type Factory func(h Handle) (Plugin, error)

// Registry maps plugin names to factories. It is explicit: plugins are
// added by the code that builds the registry (plugins.NewInTreeRegistry),
// never by init().
type Registry map[string]Factory

// Register adds a factory; a name registered twice is an error.
func (r Registry) Register(name string, f Factory) error {
	if _, dup := r[name]; dup {
		return fmt.Errorf("plugin %q registered twice", name)
	}
	r[name] = f
	return nil
}

// New builds the named plugin for the scheduler h describes.
func (r Registry) New(name string, h Handle) (Plugin, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("no plugin named %q (have %v)", name, r.Names())
	}
	p, err := f(h)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	return p, nil
}

// Names returns the registered names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
