// Package slurmsim reads the job submissions of the Slurm simulator
// (the event lists of UB CCR's slurm_sim_tools, "jobs500.events"): one
// event a line,
//
//	-dt 49 -e submit_batch_job | -J jobid_1002 -sim-walltime 1201 --uid=user1 -t 00:30:00 -n 1 --ntasks-per-node=1 -A account1 -p normal -q normal --constraint=CPU-N pseudo.job
//
// left of '|' the event (-dt: seconds from the start of the simulation;
// -e: the event, submit_batch_job), right of it the sbatch(1) options of
// the job, with the simulator's own -sim-walltime (how long the job runs,
// seconds; -1: until its time limit) and -jid (its job ID). Jobs without
// -jid are numbered from the first job ID (slurm.conf's FirstJobId) in
// the order of the lines, as Slurm numbers them (docs/slurm.md). Errors
// are *slurm.Error values naming the file, line and option.
package slurmsim

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/slurm"
)

// Looks reports whether line (a file's first line that is not blank) is
// a Slurm simulator event: it starts with "-dt " and holds "-e ".
func Looks(line []byte) bool {
	line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
	return bytes.HasPrefix(line, []byte("-dt ")) && bytes.Contains(line, []byte(" -e ")) && bytes.Contains(line, []byte("|"))
}

// maxJobs bounds the jobs of one file.
const maxJobs = 100_000_000

// Read reads an event list from r; file names it in errors. Jobs without
// -jid are numbered from firstID (at least 1). Lines that are blank or
// start with '#' are skipped.
func Read(r io.Reader, file string, firstID int64) ([]slurm.Job, error) {
	lr := slurm.NewLines(r, file)
	next := max(firstID, 1)
	var jobs []slurm.Job
	seen := map[int64]int{}
	for {
		b, err := lr.Next()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return nil, err
		}
		n := lr.Line()
		text := strings.TrimSpace(string(b))
		if text == "" || text[0] == '#' {
			continue
		}
		j, hasID, err := parse(text, file, n)
		if err != nil {
			return nil, err
		}
		if !hasID {
			j.ID = next
		}
		next = j.ID + 1
		if first, dup := seen[j.ID]; dup {
			return nil, slurm.Errorf(file, n, "job %d again (first on line %d)", j.ID, first)
		}
		if len(jobs) >= maxJobs {
			return nil, slurm.Errorf(file, n, "more than %d jobs", maxJobs)
		}
		seen[j.ID] = n
		jobs = append(jobs, j)
	}
}

// parse reads one event line.
func parse(text, file string, n int) (slurm.Job, bool, error) {
	j := slurm.Job{Line: n, TimeLimit: slurm.Unknown, Run: slurm.Unknown, Start: slurm.Unknown, End: slurm.Unknown}
	event, opts, ok := strings.Cut(text, "|")
	if !ok {
		return j, false, slurm.Errorf(file, n, "no '|' between the event and the job's options")
	}
	ev := strings.Fields(event)
	hasDT, hasEvent := false, false
	for i := 0; i < len(ev); i += 2 {
		if i+1 >= len(ev) {
			return j, false, slurm.Errorf(file, n, "%s: no value", ev[i])
		}
		switch ev[i] {
		case "-dt":
			v, err := strconv.ParseInt(ev[i+1], 10, 64)
			if err != nil || v < 0 || v > slurm.MaxSeconds {
				return j, false, slurm.Errorf(file, n, "-dt %s: want seconds from 0 to 10^15", slurm.Quote(ev[i+1]))
			}
			j.Submit, hasDT = v, true
		case "-e":
			if ev[i+1] != "submit_batch_job" {
				return j, false, slurm.Errorf(file, n, "-e %s: only submit_batch_job events are supported", slurm.Quote(ev[i+1]))
			}
			hasEvent = true
		default:
			return j, false, slurm.Errorf(file, n, "%s: unknown event option (want -dt and -e)", slurm.Quote(ev[i]))
		}
	}
	if !hasDT || !hasEvent {
		return j, false, slurm.Errorf(file, n, "the event needs -dt and -e")
	}
	hasID, err := options(&j, strings.Fields(opts), file, n)
	return j, hasID, err
}

// options reads the job's options into j.
func options(j *slurm.Job, args []string, file string, n int) (bool, error) {
	hasID := false
	tasks, perNode, perTask := 0, 0, 1
	script := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if script {
				return false, slurm.Errorf(file, n, "%s: a second script name (the first is the job's script)", slurm.Quote(a))
			}
			script = true // the job script, pseudo.job
			continue
		}
		name, val, inline := strings.Cut(a, "=")
		if !inline {
			if i+1 >= len(args) {
				return false, slurm.Errorf(file, n, "%s: no value", slurm.Quote(name))
			}
			i++
			val = args[i]
		}
		bad := func(err error) error { return slurm.Errorf(file, n, "%s: %w", name, err) }
		var err error
		switch name {
		case "-J", "--job-name":
			j.Name = val
		case "-jid":
			if j.ID, err = strconv.ParseInt(val, 10, 64); err != nil || j.ID < 0 {
				return false, bad(fmt.Errorf("%s is not a job ID", slurm.Quote(val)))
			}
			hasID = true
		case "-sim-walltime":
			w, err := strconv.ParseInt(val, 10, 64)
			if err != nil || w < -1 || w > slurm.MaxSeconds {
				return false, bad(fmt.Errorf("%s: want seconds, or -1 to run until the time limit", slurm.Quote(val)))
			}
			j.Run = w
			if w == -1 {
				j.Run = slurm.RunToLimit
			}
		case "--uid":
			err = slurm.CheckName("user", val)
			j.User = val
		case "-A", "--account":
			err = slurm.CheckName("account", val)
			j.Account = val
		case "-p", "--partition":
			err = slurm.CheckName("partition", val)
			j.Partition = val
		case "-q", "--qos":
			err = slurm.CheckName("QOS", val)
			j.QOS = val
		case "-t", "--time":
			j.TimeLimit, err = slurm.Duration(val)
			if err == nil && j.TimeLimit == 0 {
				j.TimeLimit = slurm.Unlimited // sbatch: "A time limit of zero requests that no time limit be imposed"
			}
		case "-n", "--ntasks":
			tasks, err = positive(val)
		case "-N", "--nodes":
			lo, _, _ := strings.Cut(val, "-") // min[-max]: the least
			j.Nodes, err = positive(lo)
		case "--ntasks-per-node":
			perNode, err = positive(val)
		case "-c", "--cpus-per-task":
			perTask, err = positive(val)
		case "-C", "--constraint":
			_, err = slurm.Constraint(val)
			j.Constraint = val
		case "--mem":
			j.Mem, err = slurm.ParseMemory(val, slurm.PerNode)
		case "--mem-per-cpu":
			j.Mem, err = slurm.ParseMemory(val, slurm.PerCPU)
		case "--gres":
			j.GPUs, err = slurm.GPUs(val)
			if other := slurm.OtherGRES(val); err == nil && len(other) > 0 {
				err = fmt.Errorf("%s: only GPUs are supported", strings.Join(other, ","))
			}
		default:
			return false, slurm.Errorf(file, n, "%s: option not supported (docs/slurm.md lists those read)", slurm.Quote(name))
		}
		if err != nil {
			return false, bad(err)
		}
	}
	if tasks == 0 {
		tasks = max(j.Nodes, 1) * max(perNode, 1) // sbatch: one task per node by default
	}
	if int64(tasks)*int64(perTask) > 1<<30 {
		return false, slurm.Errorf(file, n, "more than 2^30 CPUs")
	}
	j.CPUs = tasks * perTask
	j.CPUsPerNode = perNode * perTask
	return hasID, nil
}

// positive reads an integer from 1 to 2^30.
func positive(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > 1<<30 {
		return 0, fmt.Errorf("%s: want an integer from 1 to 2^30", slurm.Quote(s))
	}
	return int(v), nil
}
