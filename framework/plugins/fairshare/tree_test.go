package fairshare

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// randomCluster returns a one-queue cluster with up to 5 user groups over
// users u0..u7, nested at random without cycles (a group may be in
// several), random queue shares and group shares.
func randomCluster(r *rand.Rand) *cluster.Cluster {
	users := []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"}
	c := &cluster.Cluster{Hosts: []cluster.Host{{Name: "h", Slots: 1}}}
	for g := range r.IntN(6) {
		ug := cluster.UserGroup{Name: fmt.Sprintf("g%d", g)}
		for _, u := range users {
			if r.IntN(4) == 0 {
				ug.Members = append(ug.Members, u)
			}
		}
		for k := range g {
			if r.IntN(3) == 0 {
				ug.Members = append(ug.Members, fmt.Sprintf("g%d", k))
			}
		}
		if len(ug.Members) == 0 {
			ug.Members = []string{users[r.IntN(len(users))]}
		}
		r.Shuffle(len(ug.Members), func(i, j int) { ug.Members[i], ug.Members[j] = ug.Members[j], ug.Members[i] })
		for _, m := range ug.Members {
			if r.IntN(2) == 0 {
				ug.Shares = append(ug.Shares, cluster.UserShare{User: m, Shares: 1 + r.IntN(4)})
			}
		}
		if r.IntN(3) == 0 {
			ug.Shares = append(ug.Shares, cluster.UserShare{User: "default", Shares: 1 + r.IntN(4)})
		}
		c.UserGroups = append(c.UserGroups, ug)
	}
	q := cluster.Queue{Name: "fs", Picker: Name}
	names := slices.Clone(users)
	for _, g := range c.UserGroups {
		names = append(names, g.Name)
	}
	for _, n := range names {
		if r.IntN(3) == 0 {
			q.Shares = append(q.Shares, cluster.UserShare{User: n, Shares: 1 + r.IntN(4)})
		}
	}
	r.Shuffle(len(q.Shares), func(i, j int) { q.Shares[i], q.Shares[j] = q.Shares[j], q.Shares[i] })
	if r.IntN(2) == 0 {
		q.Shares = append(q.Shares, cluster.UserShare{User: "default", Shares: 1 + r.IntN(4)})
	}
	c.Queues = []cluster.Queue{q}
	if err := c.Init(); err != nil {
		panic(err)
	}
	return c
}

// refPath is the groups from the top down that user's jobs are charged
// through, by the rule of docs/fairshare.md, read off the configuration.
func refPath(c *cluster.Cluster, user string) []string {
	var path []string
	type entry struct {
		name    string
		isGroup bool
	}
	var level []entry
	for _, us := range c.Queues[0].Shares {
		if us.User != "default" {
			_, isGroup := c.UserGroupByName(us.User)
			level = append(level, entry{us.User, isGroup})
		}
	}
	for {
		next := ""
		for _, e := range level {
			if !e.isGroup && e.name == user {
				return path
			}
		}
		for _, e := range level {
			if g, _ := c.UserGroupByName(e.name); e.isGroup && c.InUserGroup(user, g) {
				next = e.name
				break
			}
		}
		if next == "" {
			return path
		}
		path = append(path, next)
		g, _ := c.UserGroupByName(next)
		level = level[:0]
		for _, m := range c.UserGroups[g].Members {
			_, isGroup := c.UserGroupByName(m)
			level = append(level, entry{m, isGroup})
		}
	}
}

// refOrder orders jobs by walking the tree from the top at every pick,
// recomputing every priority: the definition Order implements with heaps.
func refOrder(p *Plugin, now int64, jobs []*framework.Job) []cluster.JobID {
	jobs = slices.Clone(jobs)
	slices.SortStableFunc(jobs, func(a, b *framework.Job) int {
		return cmp.Or(cmp.Compare(a.Spec.Submit, b.Spec.Submit), cmp.Compare(a.Spec.ID, b.Spec.ID))
	})
	pending := map[int32][]*framework.Job{}
	for _, j := range jobs {
		n := p.leaf(j.Spec.User)
		pending[n] = append(pending[n], j)
	}
	extra := map[int32]int{}
	var pick func(n int32) (int32, bool) // the leaf n would give a job from
	pick = func(n int32) (int32, bool) {
		if len(pending[n]) > 0 {
			return n, true
		}
		best, bestLeaf, found := int32(-1), int32(-1), false
		for c := range p.nodes {
			if p.nodes[c].parent != n {
				continue
			}
			leaf, ok := pick(int32(c))
			if !ok {
				continue
			}
			if found {
				pc, pb := p.priority(int32(c), now, extra[int32(c)]), p.priority(best, now, extra[best])
				jc, jb := pending[leaf][0].Spec, pending[bestLeaf][0].Spec
				if pc < pb || pc == pb && cmp.Or(cmp.Compare(jc.Submit, jb.Submit), cmp.Compare(jc.ID, jb.ID)) > 0 {
					continue
				}
			}
			best, bestLeaf, found = int32(c), leaf, true
		}
		return bestLeaf, found
	}
	var out []cluster.JobID
	for {
		leaf, ok := pick(0)
		if !ok {
			return out
		}
		j := pending[leaf][0]
		pending[leaf] = pending[leaf][1:]
		out = append(out, j.Spec.ID)
		for a := leaf; a > 0; a = p.nodes[a].parent {
			extra[a] += j.Spec.TasksMin
		}
	}
}

// TestOrderRandomTrees compares Order with refOrder, and the accounts'
// paths with refPath, over random groups, shares, usage and jobs, two
// cycles each (Order's scratch must be reset).
func TestOrderRandomTrees(t *testing.T) {
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 7))
		c := randomCluster(r)
		p := New(c, 0)
		var id cluster.JobID
		for range r.IntN(8) {
			id++
			j := &framework.Job{Spec: &cluster.Job{ID: id, User: fmt.Sprintf("u%d", r.IntN(8))}, Start: int64(r.IntN(7200)),
				Alloc: &cluster.JobAlloc{Hosts: []cluster.HostAlloc{{Slots: 1 + r.IntN(4)}}}}
			p.JobStarted(j, j.Start)
			if r.IntN(2) == 0 {
				p.JobFinished(j, j.Start+int64(r.IntN(3600)))
			}
		}
		for cycle := range 2 {
			now := int64(10800 + 3600*cycle)
			var jobs []*framework.Job
			for range r.IntN(25) {
				id++
				min := 1 + r.IntN(3)
				jobs = append(jobs, &framework.Job{Spec: &cluster.Job{ID: id, User: fmt.Sprintf("u%d", r.IntN(8)), Submit: int64(r.IntN(4)), TasksMin: min, TasksMax: min}})
			}
			r.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
			want := refOrder(p, now, jobs)
			p.Order(now, jobs)
			var got []cluster.JobID
			for _, j := range jobs {
				got = append(got, j.Spec.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d cycle %d: order %v, want %v\ngroups %+v\nshares %+v", seed, cycle, got, want, c.UserGroups, c.Queues[0].Shares)
			}
		}
		for u := range 8 {
			user := fmt.Sprintf("u%d", u)
			var got []string
			for n := p.nodes[p.leaf(user)].parent; n > 0; n = p.nodes[n].parent {
				got = append([]string{c.UserGroups[p.nodes[n].group].Name}, got...)
			}
			if want := refPath(c, user); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %s charged through %v, want %v\ngroups %+v\nshares %+v", seed, user, got, want, c.UserGroups, c.Queues[0].Shares)
			}
		}
	}
}
