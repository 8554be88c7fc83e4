// Package clustertest builds small clusters and jobs in code for tests,
// without going through a scenario file.
package clustertest

import (
	"cmp"
	"math"
	"slices"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// Host describes a test host. Mem < 0 means the host has no mem resource;
// 0 is a host with mem defined as 0 MB.
type Host struct {
	Name   string
	Slots  int
	Mem    float64
	Type   string
	Model  string
	Tags   []string
	Status cluster.HostStatus
	// GPUs is the host's number of GPUs (its ngpus_physical capacity; 0:
	// none, the resource undefined there) and GPUModel their model.
	GPUs     int
	GPUModel string
}

// Job describes a test job: Tasks is min and max (max 0 means max = min).
type Job struct {
	ID       cluster.JobID
	User     string
	Project  string
	Queue    string
	Submit   int64
	Min, Max int
	ResReq   string
	Running  map[string]int
	// Runtime and Estimate in seconds; Start for a running job.
	Runtime, Estimate, Start int64
	// Array, Index and ArrayLimit make the job an element of an array
	// (cluster.Job's Array, ArrayIndex, ArrayLimit).
	Array      cluster.JobID
	Index      int64
	ArrayLimit int
	// Name, Depend (a dependency expression, parsed by Build) and
	// ExitCode are cluster.Job's.
	Name      string
	Depend    string
	ExitCode  int
	Exclusive bool
	// GPU is a GPU requirement in bsub -gpu's syntax, merged into the
	// job's requirement by Build (gpureq.Merge).
	GPU string
}

// Spec is a whole test cluster. Queues default to one "normal" firstfit
// queue.
type Spec struct {
	Hosts  []Host
	Shared []cluster.Shared
	Queues []cluster.Queue
	Limits []cluster.Limit
	Jobs   []Job
	// MemMethod is how mem is reserved (cluster.PerHost by default, as in
	// a configuration without reservation_usage).
	MemMethod cluster.ReserveMethod
	// GPUMethod is how ngpus_physical is reserved (cluster.PerHost by
	// default, as LSF reserves GPUs).
	GPUMethod cluster.ReserveMethod
	// UserGroups and HostGroups are the cluster's groups, which limits,
	// queue host lists and shares may name.
	UserGroups []cluster.UserGroup
	HostGroups []cluster.HostGroup
}

// Build assembles and initialises the cluster. It panics on a bad spec or
// resreq: specs are test code.
func Build(s Spec) *cluster.Cluster {
	c := &cluster.Cluster{Shared: s.Shared, Queues: s.Queues, Limits: s.Limits, UserGroups: s.UserGroups, HostGroups: s.HostGroups}
	if len(c.Queues) == 0 {
		c.Queues = []cluster.Queue{{Name: "normal", Policy: cluster.PolicyFirstFit}}
	}
	hasMem := false
	for _, h := range s.Hosts {
		hasMem = hasMem || h.Mem >= 0
	}
	hasGPUs := slices.ContainsFunc(s.Hosts, func(h Host) bool { return h.GPUs > 0 })
	if hasMem {
		c.Resources = []string{"mem"}
		c.ReservationUsage = []cluster.ReserveMethod{s.MemMethod}
	}
	if hasGPUs {
		c.Resources = append(c.Resources, gpureq.Resource)
		c.ReservationUsage = append(c.ReservationUsage[:len(c.Resources)-1:len(c.Resources)-1], s.GPUMethod)
	}
	for _, h := range s.Hosts {
		host := cluster.Host{Name: h.Name, Slots: h.Slots, Type: h.Type, Model: h.Model, Tags: h.Tags, Status: h.Status, GPUModel: h.GPUModel}
		if hasMem {
			host.Capacity = []float64{h.Mem}
			if h.Mem < 0 {
				host.Capacity[0] = math.NaN()
			}
		}
		if hasGPUs {
			g := math.NaN()
			if h.GPUs > 0 {
				g = float64(h.GPUs)
			}
			host.Capacity = append(host.Capacity, g)
		}
		c.Hosts = append(c.Hosts, host)
	}
	if err := c.Init(); err != nil {
		panic(err)
	}
	for _, j := range s.Jobs {
		req, err := resreq.Parse(j.ResReq)
		if err != nil {
			panic(err)
		}
		job := cluster.Job{ID: j.ID, User: j.User, Project: j.Project, Submit: j.Submit, TasksMin: max(j.Min, 1), TasksMax: max(j.Max, j.Min, 1),
			ResReq: j.ResReq, Req: req, Runtime: j.Runtime, Estimate: j.Estimate, Start: j.Start,
			Array: j.Array, ArrayIndex: j.Index, ArrayLimit: j.ArrayLimit, Name: j.Name, ExitCode: j.ExitCode, Exclusive: j.Exclusive}
		if j.Depend != "" {
			if job.Depend, err = depend.Parse(j.Depend); err != nil {
				panic(err)
			}
		}
		if j.GPU != "" {
			g, err := gpureq.Parse(j.GPU)
			if err != nil {
				panic(err)
			}
			if job.Req, err = gpureq.Merge(job.Req, g); err != nil {
				panic(err)
			}
			job.GPU = &g
		}
		if j.Queue != "" {
			q, ok := c.QueueByName(j.Queue)
			if !ok {
				panic("unknown queue " + j.Queue)
			}
			job.Queue = q
		}
		for name, n := range j.Running {
			h, ok := c.HostByName(name)
			if !ok {
				panic("unknown host " + name)
			}
			if n > 0 {
				job.RunningOn = append(job.RunningOn, cluster.HostSlots{Host: h, Slots: n})
			}
		}
		slices.SortFunc(job.RunningOn, func(a, b cluster.HostSlots) int { return cmp.Compare(a.Host, b.Host) })
		c.Jobs = append(c.Jobs, job)
	}
	return c
}
