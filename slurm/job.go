package slurm

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Job is one Slurm job as a workload reader sees it: what was submitted
// (sbatch(1) options, or sacct(1)'s request columns) and, from
// accounting, how it ran. Times are in seconds; memory in MB.
type Job struct {
	// ID is the job's ID (sacct JobIDRaw; the simulator's job number).
	ID int64
	// Name is the job's name (-J; sacct JobName).
	Name string
	// User, Account, Partition and QOS are the job's (--uid, -A, -p, -q;
	// sacct User, Account, Partition, QOS); "" when not given.
	User, Account, Partition, QOS string
	// Submit is the submit time (Unix seconds for accounting records, or
	// seconds from the start of a simulator's event list).
	Submit int64
	// TimeLimit is the time limit (-t; sacct Timelimit) in seconds, or
	// Unlimited, or Unknown.
	TimeLimit int64
	// CPUs is the number of CPUs the job asks for (-n × -c; sacct NCPUS,
	// else ReqCPUS), at least 1.
	CPUs int
	// Nodes is the number of nodes (-N; sacct NNodes), 0 when not given.
	Nodes int
	// CPUsPerNode is the CPUs on each node (--ntasks-per-node × -c), 0
	// when not given.
	CPUsPerNode int
	// Mem is the memory request (--mem, --mem-per-cpu; sacct ReqMem);
	// Mem.Per is 0 when the job gave none (the partition's default
	// applies).
	Mem Memory
	// GPUs is the GPUs per node (--gres=gpu:N; sacct ReqGRES or
	// ReqTRES), 0 for none.
	GPUs int
	// Constraint is the --constraint expression as written ("" for none).
	Constraint string

	// Run is the time the job ran, in seconds (sacct Elapsed; the
	// simulator's -sim-walltime), or RunToLimit when it runs until its
	// time limit (a walltime of -1), or Unknown.
	Run int64
	// Start and End are the recorded start and end times (sacct Start,
	// End), Unknown when the job did not start or they are not given.
	Start, End int64
	// State is the recorded state (sacct State: COMPLETED, TIMEOUT,
	// FAILED, CANCELLED, …), "" when not given.
	State string
	// NodeList is the recorded node list (sacct NodeList), as written.
	NodeList string
	// Line is the line of the record in its file (1-based).
	Line int
}

// RunToLimit is Job.Run for a job that runs until its time limit (the
// Slurm simulator's -sim-walltime -1).
const RunToLimit int64 = -3

// Runtime returns the time the job runs in a simulation, in seconds: its
// recorded run time, which a TIMEOUT job keeps even past its limit (Slurm
// let it run that long); for RunToLimit its time limit; 0 when unknown.
func (j *Job) Runtime() int64 {
	switch {
	case j.Run >= 0:
		return j.Run
	case j.Run == RunToLimit && j.TimeLimit > 0:
		return j.TimeLimit
	}
	return 0
}

// PerNodeCPUs returns the CPUs the job takes on each of its nodes: its
// CPUsPerNode when given, else its CPUs spread evenly over its Nodes
// (rounded up), else 0 (not known: the job may spread as it fits).
func (j *Job) PerNodeCPUs() int {
	switch {
	case j.CPUsPerNode > 0:
		return min(j.CPUsPerNode, max(j.CPUs, 1))
	case j.Nodes > 0:
		return (max(j.CPUs, 1) + j.Nodes - 1) / j.Nodes
	}
	return 0
}

// Target says how the cluster a job is placed on counts what the job
// asks for, so that ResReq can state the request in its terms.
type Target struct {
	// Mem and GPUs: the cluster has the host resources mem and
	// ngpus_physical; a request of a resource the cluster lacks is left
	// out of the requirement.
	Mem, GPUs bool
	// MemPerTask and GPUsPerTask: the cluster reserves mem
	// (ngpus_physical) per task rather than per host
	// (reservation_usage; docs/reservation.md).
	MemPerTask, GPUsPerTask bool
	// MaxSlots is the most slots any host has: a job that gives no
	// per-node layout is assumed to fill hosts this large.
	MaxSlots int
	// DefMem is the memory of a job that asks for none: its partition's
	// DefMemPerCPU or DefMemPerNode (Per 0: none).
	DefMem Memory
}

// ResReq returns the xce resource requirement (docs/resreq.md) for the
// job on target t, with one task per CPU:
//
//   - select[...] from Constraint (Constraint);
//   - span[ptile=P] with P = PerNodeCPUs, when known: P tasks per host
//     (--ntasks-per-node; NCPUS/NNodes);
//   - rusage[mem=...] from Mem (else t.DefMem): per task, or per host,
//     as the cluster reserves mem. A per-CPU amount is exact per task;
//     per host it is P × the amount. A per-node amount is exact per host;
//     per task it is the amount / P. Without P, a job is taken to fill
//     hosts of t.MaxSlots slots (min(CPUs, MaxSlots) tasks on a host);
//   - rusage[ngpus_physical=G] with G = GPUs per node, likewise.
func (j *Job) ResReq(t Target) (string, error) {
	var parts []string
	if j.Constraint != "" {
		sel, err := Constraint(j.Constraint)
		if err != nil {
			return "", err
		}
		parts = append(parts, "select["+sel+"]")
	}
	cpus := max(j.CPUs, 1)
	perHost := j.PerNodeCPUs()
	if perHost > 0 {
		parts = append(parts, "span[ptile="+strconv.Itoa(perHost)+"]")
	} else {
		perHost = min(cpus, max(t.MaxSlots, 1))
	}
	var usage []string
	mem := j.Mem
	if mem.Per == 0 {
		mem = t.DefMem
	}
	if t.Mem && mem.Per != 0 && mem.MB > 0 {
		v := amount(mem.MB, mem.Per == PerCPU, t.MemPerTask, perHost)
		usage = append(usage, "mem="+v)
	}
	if t.GPUs && j.GPUs > 0 {
		v := amount(float64(j.GPUs), false, t.GPUsPerTask, perHost)
		usage = append(usage, "ngpus_physical="+v)
	}
	if len(usage) > 0 {
		parts = append(parts, "rusage["+strings.Join(usage, ":")+"]")
	}
	return strings.Join(parts, " "), nil
}

// amount states v, per CPU (perCPU) or per node, per task (perTask) or
// per host of perHost tasks.
func amount(v float64, perCPU, perTask bool, perHost int) string {
	switch {
	case perCPU && !perTask:
		v *= float64(perHost)
	case !perCPU && perTask:
		v /= float64(perHost)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// CheckName checks a user, account, partition or QOS name for xce: not
// empty, valid UTF-8, no white space, control or other non-printing
// characters (as xce's names, docs/scenario.md) or '|' (which sacct -P
// output cannot hold), at most 256 bytes.
func CheckName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s: empty", what)
	}
	if len(s) > 256 {
		return fmt.Errorf("%s %s: longer than 256 bytes", what, Quote(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %s: not valid UTF-8", what, Quote(s))
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '|' {
			return fmt.Errorf("%s %s: white space, a control character or '|'", what, Quote(s))
		}
	}
	return nil
}
