package fairshare_test

import (
	"fmt"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/plugins/fairshare"
	ct "github.com/xce-sched/xce/internal/clustertest"
)

// BenchmarkOrder orders 100,000 pending jobs of 1,000 users: flat, and
// with the users in 10 groups of 100 inside one top group (three levels
// of accounts). Measured when the share tree came in: flat, no slower
// than the flat picker it replaced; grouped, about 1.5 times the flat
// time.
func BenchmarkOrder(b *testing.B) {
	for _, grouped := range []bool{false, true} {
		b.Run(fmt.Sprintf("groups=%v", grouped), func(b *testing.B) {
			spec := ct.Spec{Hosts: []ct.Host{{Name: "h", Slots: 1, Mem: -1}}, Queues: []cluster.Queue{fairQueue()}}
			if grouped {
				top := cluster.UserGroup{Name: "top"}
				for g := range 10 {
					ug := cluster.UserGroup{Name: fmt.Sprintf("g%d", g)}
					for u := range 100 {
						ug.Members = append(ug.Members, fmt.Sprintf("u%d", g*100+u))
					}
					spec.UserGroups = append(spec.UserGroups, ug)
					top.Members = append(top.Members, ug.Name)
				}
				spec.UserGroups = append(spec.UserGroups, top)
				spec.Queues = []cluster.Queue{fairQueue(cluster.UserShare{User: "top", Shares: 1})}
			}
			c := ct.Build(spec)
			jobs := make([]*framework.Job, 100_000)
			for i := range jobs {
				jobs[i] = &framework.Job{Spec: &cluster.Job{ID: cluster.JobID(i), User: fmt.Sprintf("u%d", i%1000), Submit: int64(i % 977), TasksMin: 1 + i%3}}
			}
			p := fairshare.New(c, 0)
			b.ResetTimer()
			for range b.N {
				p.Order(3600, jobs)
			}
		})
	}
}
