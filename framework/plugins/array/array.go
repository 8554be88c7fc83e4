// Package array is the gate of job arrays' caps: an array submitted with
// %N (LSF's bsub -J "name[1-100]%10", Slurm's --array=1-100%10) runs at
// most N of its elements at once; the others pend with ArrayLimit
// (docs/arrays.md).
package array

import (
	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/framework"
)

// Name is the plugin's registry name.
const Name = "array"

// Plugin is the array gate: it counts each capped array's running
// elements (as an Observer) and, in each cycle, admits its pending
// elements in the cycle's order while running plus admitted stay under
// the cap.
type Plugin struct {
	running  map[cluster.JobID]int // per capped array: elements running
	admitted map[cluster.JobID]int // per capped array: admitted in this pass
}

var (
	_ framework.Gate     = (*Plugin)(nil)
	_ framework.Observer = (*Plugin)(nil)
)

// New returns an array gate with no element running.
func New() *Plugin {
	return &Plugin{running: map[cluster.JobID]int{}, admitted: map[cluster.JobID]int{}}
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// Applies implements framework.Gate: the elements of capped arrays.
func (*Plugin) Applies(spec *cluster.Job) bool { return spec.Array != 0 && spec.ArrayLimit > 0 }

// Begin implements framework.Gate.
func (p *Plugin) Begin(int64) { clear(p.admitted) }

// Admit implements framework.Gate: an element is admitted while its
// array's running and already admitted elements are fewer than its cap;
// else it pends with ArrayLimit.
// Counts implements framework.Counting: an element under a cap takes a
// place when admitted.
func (p *Plugin) Counts(spec *cluster.Job) bool { return p.Applies(spec) }

// Admit implements framework.Gate.
func (p *Plugin) Admit(job *framework.Job) (bool, framework.PendReasons) {
	s := job.Spec
	if !p.Applies(s) {
		return true, framework.PendReasons{}
	}
	if p.running[s.Array]+p.admitted[s.Array] >= s.ArrayLimit {
		return false, framework.PendReasons{Main: framework.ArrayLimit, Detail: -1}
	}
	p.admitted[s.Array]++
	return true, framework.PendReasons{}
}

// JobStarted implements framework.Observer.
func (p *Plugin) JobStarted(job *framework.Job, _ int64) {
	if s := job.Spec; p.Applies(s) {
		p.running[s.Array]++
		if p.admitted[s.Array] > 0 {
			p.admitted[s.Array]-- // it was admitted in this pass
		}
	}
}

// JobFinished implements framework.Observer.
func (p *Plugin) JobFinished(job *framework.Job, _ int64) {
	if s := job.Spec; p.Applies(s) {
		if p.running[s.Array]--; p.running[s.Array] <= 0 {
			delete(p.running, s.Array)
		}
	}
}
