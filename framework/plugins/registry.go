// Package plugins assembles the in-tree plugins into a registry.
package plugins

import (
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/parjob"
	"github.com/xce-sched/xce/framework/plugins/priority"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
)

// NewInTreeRegistry returns a registry of every plugin shipped with xce:
// the seqjob and parjob allocators and the priority picker.
func NewInTreeRegistry() framework.Registry {
	r := framework.Registry{}
	must := func(err error) {
		if err != nil {
			panic(err) // names below are distinct constants; a clash is a programming error
		}
	}
	must(r.Register(seqjob.Name, func() (framework.Plugin, error) { return seqjob.New(), nil }))
	must(r.Register(parjob.Name, func() (framework.Plugin, error) { return parjob.New(), nil }))
	must(r.Register(priority.Name, func() (framework.Plugin, error) { return priority.Plugin{}, nil }))
	return r
}
