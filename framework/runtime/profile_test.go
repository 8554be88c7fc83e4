package runtime_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// TestRuntimeImportsNoPlugin (issue 14): the runtime resolves every plugin
// through the registry, so none of its non-test files imports a plugin
// package.
func TestRuntimeImportsNoPlugin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, "github.com/xce-sched/xce/framework/plugins") {
				t.Errorf("%s imports %s", f, path)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("only %d files checked", checked)
	}
}

// counting wraps an allocator: it takes the jobs of exactly tasks tasks
// and counts the plans it was asked for.
type counting struct {
	framework.Allocator
	tasks int
	asked *int
}

func (c counting) Name() string { return "counting" }

func (c counting) Handles(job *framework.Job) bool { return job.Spec.TasksMin == c.tasks }

func (c counting) Plans(job *framework.Job, v *framework.View) (framework.PlanIterator, error) {
	*c.asked++
	return c.Allocator.Plans(job, v)
}

// TestProfile: a profile given in Options replaces the configuration's.
// An allocator registered under a name of its own and listed first takes
// the jobs its Handles accepts (the 3-task job, on one host of 4 slots
// beside the 1-task one), the others go on to seqjob and parjob; each
// queue's picker and policy come from the profile. Names the registry
// lacks, and profiles that do not match the cluster, fail.
func TestProfile(t *testing.T) {
	spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 4, Mem: -1}},
		Queues: []cluster.Queue{{Name: "normal", Policy: cluster.PolicyConservative}},
		Jobs:   []ct.Job{{ID: 1, Min: 3, Runtime: 10, Estimate: 10}, {ID: 2, Min: 1, Runtime: 10, Estimate: 10}, {ID: 3, Min: 2, Runtime: 10, Estimate: 10}}}
	reg := plugins.NewInTreeRegistry()
	asked := 0
	if err := reg.Register("counting", func(h framework.Handle) (framework.Plugin, error) {
		p, err := plugins.NewInTreeRegistry().New("parjob", h)
		if err != nil {
			return nil, err
		}
		return counting{Allocator: p.(framework.Allocator), tasks: 3, asked: &asked}, nil
	}); err != nil {
		t.Fatal(err)
	}
	prof := framework.Profile{Allocators: []string{"counting", "seqjob", "parjob"},
		Queues: []framework.QueueProfile{{Picker: "priority", Policy: "firstfit"}}}
	c := ct.Build(spec)
	s, err := runtime.New(c, runtime.Options{Registry: reg, Profile: &prof})
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, s, 0)
	// firstfit (the profile's, not the configuration's conservative): job 3
	// does not fit beside jobs 1 and 2 and holds no reservation.
	for i, want := range []string{"RUN@0 h*3", "RUN@0 h*1", "PEND NotEnoughSlots"} {
		if got := state(c, s.Jobs[i]); got != want {
			t.Errorf("job %d: %s, want %s", i+1, got, want)
		}
	}
	if asked != 1 {
		t.Errorf("the counting allocator was asked %d times, want 1 (job 1 only)", asked)
	}

	for _, tc := range []struct {
		name string
		prof framework.Profile
		want string
	}{
		{"no allocator", framework.Profile{Queues: prof.Queues}, "no allocator"},
		{"queues", framework.Profile{Allocators: []string{"parjob"}}, "0 queue entries for 1 queues"},
		{"unknown allocator", framework.Profile{Allocators: []string{"nosuch"}, Queues: prof.Queues}, `no plugin named "nosuch"`},
		{"not an allocator", framework.Profile{Allocators: []string{"priority"}, Queues: prof.Queues}, "plugin priority is not an allocator"},
		{"not a preparer", framework.Profile{Allocators: []string{"parjob"}, Preparers: []string{"parjob"}, Queues: prof.Queues}, "plugin parjob is not a preparer"},
		{"not a policy", framework.Profile{Allocators: []string{"parjob"}, Queues: []framework.QueueProfile{{Picker: "priority", Policy: "parjob"}}}, "queue normal: policy: plugin parjob is not a policy"},
		{"no picker", framework.Profile{Allocators: []string{"parjob"}, Queues: []framework.QueueProfile{{Policy: "fcfs"}}}, "queue normal: picker \"\""},
	} {
		_, err := runtime.New(ct.Build(spec), runtime.Options{Registry: reg, Profile: &tc.prof})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
