package sacct

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/slurm"
)

// Header is the header line Write writes (without its line ending): the
// columns Read reads, so that what Write writes reads back to the same
// jobs.
const Header = "JobID|JobIDRaw|Partition|Account|User|QOS|JobName|Submit|Start|End|Elapsed|Timelimit|State|NNodes|NCPUS|ReqCPUS|ReqMem|ReqGRES|Constraints|NodeList"

// Write writes jobs as `sacct -P` prints them: Header, then one line per
// job, '|'-separated. Times (Unix seconds) are written in UTC; an unknown
// one (negative) is "Unknown". sacct -P has no way to escape a '|' in a
// value: a constraint holding one (an OR) is written empty, and dropped
// counts them; any other value holding '|' or a line break is an error,
// and nothing is written (Read gives none).
func Write(w io.Writer, jobs []slurm.Job) (dropped int, err error) {
	for _, j := range jobs {
		for _, v := range []string{j.Partition, j.Account, j.User, j.QOS, j.Name, j.State, j.NodeList} {
			if strings.ContainsAny(v, "|\r\n") {
				return 0, fmt.Errorf("sacct: job %d: %s holds '|' or a line break", j.ID, slurm.Quote(v))
			}
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(Header)
	bw.WriteByte('\n')
	for _, j := range jobs {
		id := strconv.FormatInt(j.ID, 10)
		run := j.Run
		if run < 0 {
			run = j.Runtime()
		}
		gres := ""
		if j.GPUs > 0 {
			gres = "gpu:" + strconv.Itoa(j.GPUs)
		}
		nodes := ""
		if j.Nodes > 0 {
			nodes = strconv.Itoa(j.Nodes)
		}
		constraint := j.Constraint
		if strings.ContainsAny(constraint, "|\r\n") {
			constraint = ""
			dropped++
		}
		f := []string{id, id, j.Partition, j.Account, j.User, j.QOS, j.Name, formatTime(j.Submit), formatTime(j.Start),
			formatTime(j.End), slurm.FormatDuration(run), slurm.FormatDuration(j.TimeLimit), j.State, nodes,
			strconv.Itoa(j.CPUs), strconv.Itoa(j.CPUs), j.Mem.String(), gres, constraint, j.NodeList}
		bw.WriteString(strings.Join(f, "|"))
		bw.WriteByte('\n')
	}
	return dropped, bw.Flush()
}

// formatTime writes Unix seconds as sacct does, in UTC; "Unknown" for a
// negative time.
func formatTime(t int64) string {
	if t < 0 {
		return "Unknown"
	}
	return time.Unix(t, 0).UTC().Format(TimeLayout)
}
