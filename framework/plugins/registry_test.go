package plugins_test

import (
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/plugins/array"
	"github.com/xce-sched/xce/framework/plugins/dependency"
	"github.com/xce-sched/xce/framework/plugins/exclusive"
	"github.com/xce-sched/xce/framework/plugins/limit"
	"github.com/xce-sched/xce/framework/plugins/parjob"
	"github.com/xce-sched/xce/framework/plugins/priority"
	"github.com/xce-sched/xce/framework/plugins/seqjob"
)

// TestDefaultProfile: the framework's default plugin names are the in-tree
// plugins' names, and every name of the profile of a configuration that
// uses each policy and picker is in the in-tree registry.
func TestDefaultProfile(t *testing.T) {
	for _, tc := range [][2]string{
		{framework.DefaultSeqAllocator, seqjob.Name},
		{framework.DefaultParAllocator, parjob.Name},
		{framework.DefaultPicker, priority.Name},
		{framework.DefaultLimits, limit.Name},
		{framework.DefaultArray, array.Name},
		{framework.DefaultDependency, dependency.Name},
		{framework.DefaultExclusive, exclusive.Name},
	} {
		if tc[0] != tc[1] {
			t.Errorf("framework's default %q, the plugin's name %q", tc[0], tc[1])
		}
	}
	c := &cluster.Cluster{Limits: []cluster.Limit{{Name: "l"}}}
	for _, p := range []cluster.Policy{"", cluster.PolicyFCFS, cluster.PolicyFirstFit, cluster.PolicyEASY, cluster.PolicyConservative} {
		for _, pk := range []string{"", "priority", "fairshare"} {
			c.Queues = append(c.Queues, cluster.Queue{Name: string(p) + pk, Policy: p, Picker: pk})
		}
	}
	prof := framework.ProfileFor(c)
	if err := prof.Validate(c); err != nil {
		t.Fatal(err)
	}
	reg := plugins.NewInTreeRegistry()
	names := append(append([]string{}, prof.Allocators...), prof.Preparers...)
	for _, q := range prof.Queues {
		names = append(names, q.Picker, q.Policy)
	}
	if len(prof.Preparers) != 1 || prof.Queues[0] != (framework.QueueProfile{Picker: "priority", Policy: "firstfit"}) {
		t.Errorf("profile %+v: want the limit preparer, and priority and firstfit for a queue that names neither", prof)
	}
	for _, n := range names {
		if _, ok := reg[n]; !ok {
			t.Errorf("profile names %q, which the in-tree registry lacks", n)
		}
	}
}
