package fairshare

import (
	"cmp"
	"slices"

	"github.com/xce-sched/xce/framework"
)

// Order implements framework.Picker: repeatedly the next pending job
// (earliest submit, then ID) of the account found by walking the share
// tree from the top, at each level to the child of highest dynamic
// priority, down to a user; the slots (minimum task count) of the jobs
// picked before count as running for the user's account and every group
// account above it. Ties between accounts go to the one whose next job was
// submitted first (then the lower ID). Without user groups the tree is one
// level of users and this is LSF's flat user-based fairshare.
func (p *Plugin) Order(now int64, jobs []*framework.Job) {
	slices.SortStableFunc(jobs, func(a, b *framework.Job) int {
		return cmp.Or(cmp.Compare(a.Spec.Submit, b.Spec.Submit), cmp.Compare(a.Spec.ID, b.Spec.ID))
	})
	p.touched = p.touched[:0]
	for _, j := range jobs {
		n := p.leaf(j.Spec.User)
		if len(p.nodes[n].jobs) == 0 {
			p.touched = append(p.touched, n)
		}
		p.nodes[n].jobs = append(p.nodes[n].jobs, j)
	}
	// Activate the leaves' ancestors, each once.
	for _, n := range p.touched[:len(p.touched):len(p.touched)] {
		for {
			par := p.nodes[n].parent
			if par < 0 {
				break
			}
			first := len(p.nodes[par].heap) == 0
			p.nodes[par].heap = append(p.nodes[par].heap, n)
			if !first {
				break
			}
			p.touched = append(p.touched, par)
			n = par
		}
	}
	// Priorities and heaps bottom-up: children before their parents.
	order := slices.Clone(p.touched)
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(p.nodes[b].depth, p.nodes[a].depth) })
	for _, n := range order {
		nd := &p.nodes[n]
		if len(nd.heap) == 0 {
			nd.next = nd.jobs[0]
		} else {
			p.heapInit(nd.heap)
			nd.next = p.nodes[nd.heap[0]].next
		}
		if n > 0 {
			nd.prio = p.priority(n, now, 0)
		}
	}
	out := make([]*framework.Job, 0, len(jobs))
	for len(p.nodes[0].heap) > 0 {
		leaf := int32(0)
		for len(p.nodes[leaf].heap) > 0 {
			leaf = p.nodes[leaf].heap[0]
		}
		job := p.nodes[leaf].next
		out = append(out, job)
		for a := leaf; a > 0; a = p.nodes[a].parent {
			p.nodes[a].extra += job.Spec.TasksMin
		}
		lf := &p.nodes[leaf]
		lf.picks++
		removed := lf.picks == len(lf.jobs)
		if !removed {
			lf.next = lf.jobs[lf.picks]
			lf.prio = p.priority(leaf, now, lf.extra)
		}
		// Up the path: re-place each account in its parent's heap.
		for a := leaf; a > 0; {
			par := p.nodes[a].parent
			if removed {
				p.heapRemove(par, int(p.nodes[a].pos))
			} else {
				p.heapFix(p.nodes[par].heap, int(p.nodes[a].pos))
			}
			if par == 0 {
				break
			}
			pn := &p.nodes[par]
			removed = len(pn.heap) == 0
			if !removed {
				pn.next = p.nodes[pn.heap[0]].next
				pn.prio = p.priority(par, now, pn.extra)
			}
			a = par
		}
	}
	copy(jobs, out)
	for _, n := range p.touched {
		nd := &p.nodes[n]
		nd.heap, nd.pos, nd.prio, nd.extra, nd.jobs, nd.next, nd.picks = nd.heap[:0], -1, 0, 0, nil, nil, 0
	}
}

// less orders accounts in a heap: higher priority first, then the earlier
// next job.
func (p *Plugin) less(a, b int32) bool {
	na, nb := &p.nodes[a], &p.nodes[b]
	if na.prio != nb.prio {
		return na.prio > nb.prio
	}
	x, y := na.next.Spec, nb.next.Spec
	return cmp.Or(cmp.Compare(x.Submit, y.Submit), cmp.Compare(x.ID, y.ID)) < 0
}

func (p *Plugin) swap(h []int32, i, j int) {
	h[i], h[j] = h[j], h[i]
	p.nodes[h[i]].pos, p.nodes[h[j]].pos = int32(i), int32(j)
}

func (p *Plugin) up(h []int32, j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !p.less(h[j], h[i]) {
			break
		}
		p.swap(h, i, j)
		j = i
	}
}

func (p *Plugin) down(h []int32, i0 int) bool {
	i := i0
	for {
		j := 2*i + 1
		if j >= len(h) {
			break
		}
		if j2 := j + 1; j2 < len(h) && p.less(h[j2], h[j]) {
			j = j2
		}
		if !p.less(h[j], h[i]) {
			break
		}
		p.swap(h, i, j)
		i = j
	}
	return i > i0
}

func (p *Plugin) heapInit(h []int32) {
	for i, n := range h {
		p.nodes[n].pos = int32(i)
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		p.down(h, i)
	}
}

func (p *Plugin) heapFix(h []int32, i int) {
	if !p.down(h, i) {
		p.up(h, i)
	}
}

// heapRemove removes the i-th child of par's heap.
func (p *Plugin) heapRemove(par int32, i int) {
	h := p.nodes[par].heap
	last := len(h) - 1
	if i != last {
		p.swap(h, i, last)
		p.heapFix(h[:last], i)
	}
	p.nodes[h[last]].pos = -1
	p.nodes[par].heap = h[:last]
}
