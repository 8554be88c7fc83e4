package sim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/framework"
	"github.com/xce-sched/xce/framework/runtime"
	"github.com/xce-sched/xce/resreq"
	"github.com/xce-sched/xce/slurm"
	"github.com/xce-sched/xce/workload/swf"
)

// Workload is a list of jobs to replay, in SWF records, with the header
// they came with (a trace's, or a model's).
type Workload struct {
	Header swf.Header
	Jobs   []swf.Job
	// Requests, when set, gives for each record of Jobs (same index) what
	// an SWF record cannot say: a Slurm workload's users, accounts,
	// partitions and resource requirements (SlurmWorkload). The jobs are
	// then replayed as they ran: no cleaning drops or caps any, and on
	// every host its own entry (no host classes: the jobs' hosts are
	// named in their output, sacct.csv).
	Requests []Request
	// Slurm, when set, holds the Slurm records Jobs were made from (same
	// index; SlurmWorkload), so that a replay can be written in their
	// terms (sacct -P).
	Slurm []slurm.Job
	// File is the file the workload was read from ("" for a generated
	// one), and Lines, when set, the line of each record of Jobs in it
	// (same index; ReadSWF; a Slurm workload's are its Requests' Line):
	// Prepare's errors name them, "FILE:LINE: job N: …".
	File  string
	Lines []int
	// MaxNodesLine and MaxProcsLine are the lines of File's header that
	// gave Header.MaxNodes and MaxProcs (0: none; ReadSWF).
	MaxNodesLine, MaxProcsLine int
}

// at names record i of w in an error: "FILE:LINE: job N", without what
// is not known ("FILE: job N (record i+1)" without its line, "job N
// (record i+1)" without a file).
func (w *Workload) at(i int) string {
	line := 0
	switch {
	case i < len(w.Lines):
		line = w.Lines[i]
	case i < len(w.Requests):
		line = w.Requests[i].Line
	}
	job := fmt.Sprintf("job %d", w.Jobs[i].ID)
	switch {
	case w.File != "" && line > 0:
		return fmt.Sprintf("%s:%d: %s", w.File, line, job)
	case w.File != "":
		return fmt.Sprintf("%s: %s (record %d)", w.File, job, i+1)
	case line > 0:
		return fmt.Sprintf("line %d: %s", line, job)
	}
	return fmt.Sprintf("%s (record %d)", job, i+1)
}

// headerLine names line n of w's file's header in an error ("FILE:N: ",
// "FILE: " when n is 0, "" for a generated workload).
func (w *Workload) headerLine(n int) string {
	if w.File == "" || n <= 0 {
		return w.whole()
	}
	return fmt.Sprintf("%s:%d: ", w.File, n)
}

// whole names w's file in an error about the whole of it ("FILE: ";
// "" for a generated workload).
func (w *Workload) whole() string {
	if w.File == "" {
		return ""
	}
	return w.File + ": "
}

// Request is what a job of a Workload asks for beyond its SWF record.
type Request struct {
	// User, Project and QOS are the job's ("" for the defaults).
	User, Project, QOS string
	// Queue names the job's queue ("" for the cluster's first queue).
	Queue string
	// ResReq is the job's resource requirement (docs/resreq.md).
	ResReq string
	// Reject: the job cannot be submitted as it is (Slurm would refuse it,
	// a time limit over its partition's MaxTime): it pends with
	// BadRequest and is counted as rejected.
	Reject bool
	// Line is the job's line in its file, for error messages.
	Line int
}

// Bounds of a cluster built from Setup.Hosts and Setup.Slots or the SWF
// header (a larger one is an error): hosts, and slots per host.
const (
	MaxHosts = 10_000_000
	MaxSlots = 1_000_000_000
)

// Setup says how to turn a workload into a cluster with jobs.
type Setup struct {
	// Base, when set, gives the hosts, shared resources, queues and limits
	// (a scenario file); its own jobs are not replayed. Otherwise the
	// cluster is Hosts × Slots single-type hosts.
	Base *cluster.Cluster
	// Hosts and Slots override the SWF header's MaxNodes and
	// MaxProcs/MaxNodes, or fill them in when the header lacks them.
	Hosts, Slots int
	// Policy, when set, is given to every queue.
	Policy cluster.Policy
	// Clean applies the common cleaning of archive logs: drop jobs with run
	// time ≤ 0 or processors ≤ 0, and cap the run time at the requested
	// time when both are known.
	Clean bool
	// PerEvent runs one cycle after every single event (Options.PerEvent)
	// instead of one per event time.
	PerEvent bool
	// PerHost keeps every host its own entry of the cluster: no host
	// classes (cluster.Cluster.HostClasses), which are otherwise made
	// whenever nothing can tell their members apart.
	PerHost bool
	// Dependencies makes SWF field 17 (the preceding job) a dependency,
	// ended(preceding), and field 18 the think time after its end
	// (cluster.Job.ThinkTime); a preceding job that is not in the
	// workload (or was cleaned out) gives none (Prepared.Unlinked).
	Dependencies bool
}

// Prepared is a workload ready to simulate.
type Prepared struct {
	Cluster    *cluster.Cluster
	TotalSlots int
	Dropped    int // jobs dropped by cleaning
	Capped     int // run times capped at the requested time
	// Linked and Unlinked count the jobs with a preceding job (SWF field
	// 17) that got a dependency, and those whose preceding job is not in
	// the workload (Setup.Dependencies).
	Linked, Unlinked int
	PerEvent         bool
	// Classes is the number of host classes the cluster's hosts were
	// grouped in (Setup.PerHost), 0 when none.
	Classes int
	// Tick is the length of the jobs' time unit in seconds (0 means 1):
	// a finer clock for a time-compressed history (FromHistory). The
	// summary is given in seconds, and the bounded slowdown's τ is 10 s.
	Tick float64
}

// Prepare builds the cluster and its jobs. A job's task count is the
// requested processors (SWF field 8), else the allocated ones (field 5);
// its runtime is field 4 (less than 0 counts as 0); its estimate is the
// requested time (field 9) when known, else the runtime; its user is
// "u<field 12>". A job larger than the cluster is kept: it pends with
// BadRequest and is counted as rejected, never shrunk. Jobs are replayed in
// submit order (ties in record order).
//
// It is an error, naming the workload's file and the job's line
// (Workload.at), if a job number repeats, if a submit, run or requested
// time is above cluster.MaxTime (10^15 s), or if the latest submit time
// plus the sum of the runtimes of the jobs kept is: ReadSWF rejects all
// these, but a Workload may come from elsewhere.
func Prepare(w *Workload, s Setup) (*Prepared, error) {
	if err := checkWorkload(w); err != nil {
		return nil, err
	}
	c, err := baseCluster(w, s)
	if err != nil {
		return nil, err
	}
	empty, err := resreq.Parse("")
	if err != nil {
		return nil, err
	}
	p := &Prepared{Cluster: c, PerEvent: s.PerEvent}
	for _, h := range c.Hosts {
		p.TotalSlots += h.Slots
	}
	c.Jobs = make([]cluster.Job, 0, len(w.Jobs))
	if w.Requests != nil {
		if err := p.requests(w, empty); err != nil {
			return nil, err
		}
		sortBySubmit(c.Jobs)
		return p, nil
	}
	var latest, total int64 // of the jobs kept so far
	var users userNames
	for i, j := range w.Jobs {
		procs := j.ReqProcs
		if procs <= 0 {
			procs = j.AllocProcs
		}
		run := j.Run
		if s.Clean {
			if run <= 0 || procs <= 0 {
				p.Dropped++
				continue
			}
			if j.ReqTime > 0 && run > j.ReqTime {
				run = j.ReqTime
				p.Capped++
			}
		}
		run = max(run, 0)
		// The horizon (cluster.MaxTime); terms at most MaxTime: no overflow.
		latest = max(latest, j.Submit)
		if total += run; latest+total > cluster.MaxTime {
			return nil, fmt.Errorf("%s: the latest submit time so far (%d s) plus the runtimes of the jobs up to it (%d s) exceed 10^15 s, the most a simulation may reach",
				w.at(i), latest, total)
		}
		est := j.ReqTime
		if est <= 0 {
			est = run
		}
		user := users.name(j.User)
		tasks := int(min(max(procs, 1), 1<<31-1))
		c.Jobs = append(c.Jobs, cluster.Job{
			ID: cluster.JobID(j.ID), User: user, Project: cluster.DefaultProject,
			Submit: max(j.Submit, 0), TasksMin: tasks, TasksMax: tasks,
			Req: empty, Runtime: run, Estimate: est,
		})
		if procs <= 0 {
			// No processor count at all: it can never be placed as asked.
			c.Jobs[len(c.Jobs)-1].Req = nil
		}
	}
	if s.Dependencies {
		if err := p.link(w, latest+total); err != nil {
			return nil, err
		}
	}
	sortBySubmit(c.Jobs)
	if !s.PerHost {
		if p.Cluster, p.Classes, err = c.HostClasses(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// sortBySubmit sorts jobs by submit time, stably; a trace's, in order
// already, is left as it is without moving its large records.
func sortBySubmit(jobs []cluster.Job) {
	bySubmit := func(a, b cluster.Job) int { return cmp.Compare(a.Submit, b.Submit) }
	if !slices.IsSortedFunc(jobs, bySubmit) {
		slices.SortStableFunc(jobs, bySubmit)
	}
}

// userNames names a trace's users, u<number> ("nobody" for a negative
// number), making each name of a small number once.
type userNames []string

func (u *userNames) name(n int64) string {
	switch {
	case n < 0:
		return "nobody"
	case n >= 1<<16:
		return "u" + strconv.FormatInt(n, 10)
	}
	if int(n) >= len(*u) {
		*u = append(*u, make([]string, int(n)+1-len(*u))...)
	}
	if (*u)[n] == "" {
		(*u)[n] = "u" + strconv.FormatInt(n, 10)
	}
	return (*u)[n]
}

// link gives each kept job whose SWF record names a preceding job that
// was kept the dependency ended(preceding) and its think time (at least
// 0). The job keeps its recorded submit time: it starts no sooner than
// that, nor than the think time after its preceding job ended. horizon
// is the latest submit time plus the runtimes: with the think times it
// must stay within cluster.MaxTime, so that no time of the simulation
// passes it.
func (p *Prepared) link(w *Workload, horizon int64) error {
	kept := make(map[int64]bool, len(p.Cluster.Jobs))
	for _, j := range p.Cluster.Jobs {
		kept[int64(j.ID)] = true
	}
	rec := make(map[int64]int, len(w.Jobs)) // job number -> record
	for i := range w.Jobs {
		rec[w.Jobs[i].ID] = i
	}
	for i := range p.Cluster.Jobs {
		j := &p.Cluster.Jobs[i]
		k, ok := rec[int64(j.ID)]
		if !ok || w.Jobs[k].PrecedingID <= 0 {
			continue
		}
		r := &w.Jobs[k]
		if !kept[r.PrecedingID] || r.PrecedingID == int64(j.ID) {
			p.Unlinked++
			continue
		}
		e, err := depend.Parse("ended(" + strconv.FormatInt(r.PrecedingID, 10) + ")")
		if err != nil {
			return err
		}
		j.Depend, j.ThinkTime = e, max(r.ThinkTime, 0)
		if horizon += j.ThinkTime; horizon > cluster.MaxTime {
			return fmt.Errorf("%s: the latest submit time plus the runtimes and the think times up to it exceed 10^15 s, the most a simulation may reach", w.at(k))
		}
		p.Linked++
	}
	return nil
}

// checkWorkload checks that job numbers are unique and times at most
// cluster.MaxTime (the bound of swf.MaxTime too).
func checkWorkload(w *Workload) error {
	var seen map[int64]int        // job number -> record; built at the first number that does not increase
	first := func(k int) string { // record k, for "first …"
		if k < len(w.Lines) && w.Lines[k] > 0 {
			return fmt.Sprintf("first on line %d", w.Lines[k])
		}
		if k < len(w.Requests) && w.Requests[k].Line > 0 {
			return fmt.Sprintf("first on line %d", w.Requests[k].Line)
		}
		return fmt.Sprintf("first as record %d", k+1)
	}
	for i, j := range w.Jobs {
		for _, f := range []struct {
			name string
			v    int64
		}{{"submit time", j.Submit}, {"run time", j.Run}, {"requested time", j.ReqTime}} {
			if f.v > cluster.MaxTime {
				return fmt.Errorf("%s: %s %d s is above 10^15 s", w.at(i), f.name, f.v)
			}
		}
		if seen == nil && i > 0 && j.ID <= w.Jobs[i-1].ID {
			seen = make(map[int64]int, len(w.Jobs))
			for k := range i {
				seen[w.Jobs[k].ID] = k
			}
		}
		if seen != nil {
			if k, dup := seen[j.ID]; dup {
				return fmt.Errorf("%s: job number %d repeats (%s)", w.at(i), j.ID, first(k))
			}
			seen[j.ID] = i
		}
	}
	return nil
}

// baseCluster returns the scenario's cluster with its queues' policies set,
// or Hosts × Slots hosts named n0001, n0002, … with one firstfit queue.
func baseCluster(w *Workload, s Setup) (*cluster.Cluster, error) {
	if s.Base != nil {
		c := *s.Base
		c.Queues = slices.Clone(c.Queues)
		if s.Policy != "" {
			for i := range c.Queues {
				c.Queues[i].Policy = s.Policy
			}
		}
		return &c, nil
	}
	hosts, slots := int64(s.Hosts), int64(s.Slots)
	if hosts <= 0 {
		hosts = w.Header.MaxNodes
	}
	if slots <= 0 && w.Header.MaxProcs > 0 && w.Header.MaxNodes > 0 {
		slots = w.Header.MaxProcs / w.Header.MaxNodes
	}
	if hosts <= 0 {
		return nil, fmt.Errorf("%sthe workload's header gives no MaxNodes: give --hosts (and --slots) or --cluster", w.whole())
	}
	if slots <= 0 {
		slots = 1
	}
	if hosts > MaxHosts || slots > MaxSlots {
		// The header's line at fault, or none (--hosts, --slots).
		from := ""
		switch {
		case hosts > MaxHosts && s.Hosts <= 0:
			from = w.headerLine(w.MaxNodesLine)
		case slots > MaxSlots && s.Slots <= 0:
			from = w.headerLine(w.MaxProcsLine)
		}
		return nil, fmt.Errorf("%scluster of %d hosts × %d slots is too large", from, hosts, slots)
	}
	policy := s.Policy
	if policy == "" {
		policy = cluster.PolicyFirstFit
	}
	c := &cluster.Cluster{Queues: []cluster.Queue{{Name: "normal", Policy: policy, Picker: "priority"}}}
	width := len(strconv.FormatInt(hosts, 10))
	for i := range hosts {
		c.Hosts = append(c.Hosts, cluster.Host{Name: fmt.Sprintf("n%0*d", width, i+1), Slots: int(slots)})
	}
	if err := c.Init(); err != nil {
		return nil, err
	}
	return c, nil
}

// Replay simulates a prepared workload to its end with the plugins of reg:
// it builds the scheduler, runs every event (a zero-length job ends as it
// starts), and summarizes. observe, when set, sees every cycle after the
// recorder does. A finished job keeps only its slot count in its Alloc
// (Options.CompactDone), and a job a cycle leaves out as too large to
// start keeps its host counts from the last cycle that considered it
// (runtime.Options.SkipTooLarge: the metrics read main reasons only).
func Replay(ctx context.Context, p *Prepared, reg framework.Registry, observe Observe) (*runtime.Scheduler, *Recorder, Summary, error) {
	s, err := runtime.New(p.Cluster, runtime.Options{Registry: reg, SkipTooLarge: true})
	if err != nil {
		return nil, nil, Summary{}, err
	}
	rec := NewRecorder(s)
	obs := rec.Observe
	if observe != nil {
		obs = func(e *Event) {
			rec.Observe(e)
			observe(e)
		}
	}
	if _, err := Run(ctx, s, Options{Until: math.MaxInt64, ZeroRuntimeEnds: true, Observe: obs, PerEvent: p.PerEvent, CompactDone: true}); err != nil {
		return nil, nil, Summary{}, err
	}
	tick := p.Tick
	if tick <= 0 {
		tick = 1
	}
	sum := summarize(s.Jobs, rec, p.TotalSlots, Tau/tick)
	sum.scale(tick)
	return s, rec, sum, nil
}
