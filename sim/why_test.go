package sim_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/resreq"
	"github.com/xce-sched/xce/sim"
)

// whyCluster: h1 and h2, 4 slots and 8000 MB each, mem reserved per task
// (the suggestions below are worked out that way); queues normal and
// short (firstfit), maint (closed) and only1 (h1 alone). Job 1 runs on h1 from 0 for 100 s
// (its estimate), holding running_on slots; the snapshot's now is 10.
const whyCluster = `hosts:
  - {name: h1, slots: 4, resources: {mem: 8000}}
  - {name: h2, slots: 4, resources: {mem: 8000}}
queues:
  - {name: normal, policy: firstfit}
  - {name: short, policy: firstfit}
  - {name: maint, status: closed}
  - {name: only1, hosts: [h1]}
reservation_usage: {mem: per_task}
jobs:
`

// TestSuggest: xce why's counterfactuals on snapshots worked by hand, each
// then applied and checked by one scheduling cycle of a scheduler of its
// own (not a forecast): the job starts in it.
func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		name string
		jobs string // the running job 1, then the pending job 2 (the one asked about)
		base int64  // job 2's forecast start unchanged; -1: never
		want []sim.Suggestion
	}{{
		// 5 slots free now (1 on h1, 4 on h2): 6 tasks wait for job 1's end
		// at 100; 5 start now. Another queue changes nothing.
		name: "fewer tasks",
		jobs: `  - {id: 1, tasks: 3, runtime: 100, estimate: 100, running_on: {h1: 3}, start: 0}
  - {id: 2, tasks: 6, submit: 10, runtime: 5, estimate: 5}
`,
		base: 100,
		want: []sim.Suggestion{{Change: "-n 5", What: "5 tasks instead of 6", Tasks: 5, Queue: "normal", Start: 10, Now: true}},
	}, {
		// 2 tasks of 5000 MB on one host never fit (8000 MB a host): one
		// task fits now; 4000 MB a task fit on h2 now; without
		// span[hosts=1], one task on h1 (1 slot free, 8000 MB) and one on
		// h2 fit now.
		name: "less memory, wider span",
		jobs: `  - {id: 1, tasks: 3, runtime: 100, estimate: 100, running_on: {h1: 3}, start: 0}
  - {id: 2, tasks: 2, submit: 10, runtime: 5, estimate: 5, resreq: "rusage[mem=5000] span[hosts=1]"}
`,
		base: -1,
		want: []sim.Suggestion{
			{Change: "-n 1", What: "1 task instead of 2", Tasks: 1, Queue: "normal", ResReq: "rusage[mem=5000] span[hosts=1]", Start: 10, Now: true},
			{Change: `-R "rusage[mem=4000] span[hosts=1]"`, What: "mem=4000 per task instead of 5000", Tasks: 2, Queue: "normal",
				ResReq: "rusage[mem=4000] span[hosts=1]", Start: 10, Now: true},
			{Change: `-R "rusage[mem=5000]"`, What: "spread over as many hosts as needed", Tasks: 2, Queue: "normal",
				ResReq: "rusage[mem=5000]", Start: 10, Now: true},
		},
	}, {
		// Queue only1 may use h1 alone, full until 100; queues normal and
		// short may use both: the job starts now in either. maint is
		// closed.
		name: "another queue",
		jobs: `  - {id: 1, tasks: 4, runtime: 100, estimate: 100, running_on: {h1: 4}, start: 0}
  - {id: 2, tasks: 1, submit: 10, runtime: 5, estimate: 5, queue: only1}
`,
		base: 100,
		want: []sim.Suggestion{
			{Change: "-q normal", What: "in queue normal", Tasks: 1, Queue: "normal", Start: 10, Now: true},
			{Change: "-q short", What: "in queue short", Tasks: 1, Queue: "short", Start: 10, Now: true},
		},
	}, {
		// h1 is full until 100: dropping hname==h1 starts it now on h2;
		// dropping mem>100 does not help.
		name: "a select term dropped",
		jobs: `  - {id: 1, tasks: 4, runtime: 100, estimate: 100, running_on: {h1: 4}, start: 0}
  - {id: 2, tasks: 1, submit: 10, runtime: 5, estimate: 5, resreq: "select[hname==h1 && mem>100]"}
`,
		base: 100,
		want: []sim.Suggestion{{Change: `-R "select[mem > 100]"`, What: "without select[hname == h1]", Tasks: 1, Queue: "normal",
			ResReq: "select[mem > 100]", Start: 10, Now: true}},
	}, {
		// 8 tasks, 4 a host: only 5 slots are free now (1 on h1, 4 on h2),
		// so no smaller ptile (nor none) starts 8 tasks before 100, when
		// all fit; 5 tasks (4 on h2, 1 on h1) start now, 6 do not.
		name: "only fewer tasks help",
		jobs: `  - {id: 1, tasks: 3, runtime: 100, estimate: 100, running_on: {h1: 3}, start: 0}
  - {id: 2, tasks: 8, submit: 10, runtime: 5, estimate: 5, resreq: "span[ptile=4]"}
`,
		base: 100,
		want: []sim.Suggestion{{Change: "-n 5", What: "5 tasks instead of 8", Tasks: 5, Queue: "normal", ResReq: "span[ptile=4]", Start: 10, Now: true}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := cluster.Parse("why.yaml", []byte(whyCluster+c.jobs))
			if err != nil {
				t.Fatal(err)
			}
			base, got, err := sim.Suggest(context.Background(), cl, nil, 2, 10, plugins.NewInTreeRegistry())
			if err != nil {
				t.Fatal(err)
			}
			if (base == nil) != (c.base < 0) || base != nil && base.Start != c.base {
				t.Errorf("base %+v, want start %d", base, c.base)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("suggestions\n got %+v\nwant %+v", got, c.want)
			}
			for _, s := range got {
				if !startsInOneCycle(t, cl, s) {
					t.Errorf("%s: applied, job 2 does not start in a cycle at 10", s.Change)
				}
			}
		})
	}
}

// startsInOneCycle applies suggestion s to job 2 of cl and runs one cycle
// at 10 on a new scheduler: whether job 2 starts.
func startsInOneCycle(t *testing.T, cl *cluster.Cluster, s sim.Suggestion) bool {
	cp := *cl
	cp.Jobs = slices.Clone(cl.Jobs)
	j := &cp.Jobs[1]
	q, ok := cp.QueueByName(s.Queue)
	req, err := resreq.Parse(s.ResReq)
	if !ok || err != nil {
		t.Fatalf("suggestion %+v: queue %v, resreq %v", s, ok, err)
	}
	j.TasksMin, j.TasksMax, j.Queue, j.ResReq, j.Req = s.Tasks, s.Tasks, q, s.ResReq, req
	sched, err := runtime.New(&cp, runtime.Options{Registry: plugins.NewInTreeRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.Cycle(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	return sched.Jobs[1].State == framework.Running
}
