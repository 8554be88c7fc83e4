package framework

import (
	"fmt"
	"sort"
)

// Factory builds a plugin instance.
type Factory func() (Plugin, error)

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

// New builds the named plugin.
func (r Registry) New(name string) (Plugin, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("no plugin named %q (have %v)", name, r.Names())
	}
	p, err := f()
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
