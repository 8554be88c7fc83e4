// Package sacct reads and writes Slurm accounting records as
// `sacct -P` (--parsable2) prints them: a header line naming the columns,
// then one job a line, columns separated by '|' (docs/slurm.md).
//
// The reader recognizes the format by its header (Looks), whatever the
// file's name, and reads these columns, by name (any order, any case;
// others are ignored):
//
//	JobIDRaw or JobID   the job's ID (steps, "1001.batch", are skipped)
//	Submit              submit time, required
//	Start, End          when it ran ("Unknown", "None": not known)
//	Elapsed             how long it ran (else End − Start)
//	Timelimit           its time limit (UNLIMITED, Partition_Limit)
//	NCPUS or ReqCPUS    its CPUs (AllocCPUS too), required
//	NNodes or ReqNodes  its nodes
//	ReqMem              its memory: 2800Mc per CPU, 500000Mn per node
//	ReqGRES or ReqTRES  its GPUs per node (gpu:2; gres/gpu=2)
//	Partition, QOS, User, Account, JobName, State, NodeList
//	Constraints         its --constraint, where present
//
// Times are read as UTC, "2006-01-02T15:04:05" (sacct prints local
// time without a zone; only differences matter to a replay). Errors are
// *slurm.Error values naming the file, line and column.
package sacct

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/xce-sched/xce/slurm"
)

// TimeLayout is the layout of sacct's times (ISO 8601 without a zone).
const TimeLayout = "2006-01-02T15:04:05"

// Looks reports whether line (a file's first line) is the header of
// `sacct -P` or `sacct -p` output: '|'-separated names among which a
// job ID (JobID or JobIDRaw) and Submit.
func Looks(line []byte) bool {
	line = bytes.TrimPrefix(bytes.TrimRight(line, "\r\n"), []byte("\xef\xbb\xbf"))
	if !bytes.Contains(line, []byte("|")) {
		return false
	}
	id, submit := false, false
	for _, f := range bytes.Split(line, []byte("|")) {
		switch strings.ToLower(string(f)) {
		case "jobid", "jobidraw":
			id = true
		case "submit":
			submit = true
		}
	}
	return id && submit
}

// Stats counts what Read left out.
type Stats struct {
	// Steps are the job steps' lines ("1001.batch", "1001.0"), which are
	// not jobs.
	Steps int
	// NotRun are the jobs that never started (no Start, or cancelled
	// while pending): Slurm ran nothing of them.
	NotRun int
	// Running are the jobs still running when sacct ran (no End and no
	// Elapsed to go by).
	Running int
}

// column indices of the header; -1 when absent.
type columns struct {
	id, idRaw, submit, start, end, elapsed, limit, ncpus, reqcpus, nnodes, reqnodes, reqmem,
	reqgres, reqtres, partition, qos, user, account, name, state, nodelist, constraints int
	n int
}

func header(names []string) columns {
	c := columns{n: len(names)}
	ptrs := map[string]*int{"jobid": &c.id, "jobidraw": &c.idRaw, "submit": &c.submit, "start": &c.start, "end": &c.end,
		"elapsed": &c.elapsed, "timelimit": &c.limit, "ncpus": &c.ncpus, "alloccpus": &c.ncpus, "reqcpus": &c.reqcpus,
		"nnodes": &c.nnodes, "reqnodes": &c.reqnodes, "reqmem": &c.reqmem, "reqgres": &c.reqgres, "reqtres": &c.reqtres,
		"partition": &c.partition, "qos": &c.qos, "user": &c.user, "account": &c.account, "jobname": &c.name,
		"state": &c.state, "nodelist": &c.nodelist, "constraints": &c.constraints, "constraint": &c.constraints}
	for _, p := range ptrs {
		*p = -1
	}
	for i, name := range names {
		if p, ok := ptrs[strings.ToLower(strings.TrimSpace(name))]; ok && *p < 0 {
			*p = i
		}
	}
	return c
}

// maxJobs bounds the jobs of one file.
const maxJobs = 100_000_000

// Read reads sacct -P output from r; file names it in errors. It returns
// the jobs in file order, what it left out, or the first error.
func Read(r io.Reader, file string) ([]slurm.Job, Stats, error) {
	lr := slurm.NewLines(r, file)
	var st Stats
	first, err := lr.Next()
	if err == io.EOF {
		return nil, st, slurm.Errorf(file, 0, "empty: expected sacct -P output, a header line first")
	}
	if err != nil {
		return nil, st, err
	}
	if !Looks(first) {
		return nil, st, slurm.Errorf(file, 1, "not a sacct -P header: expected '|'-separated column names with JobID and Submit")
	}
	names := strings.Split(string(first), "|")
	if names[len(names)-1] == "" { // sacct -p ends every line with '|'
		names = names[:len(names)-1]
	}
	c := header(names)
	if c.ncpus < 0 && c.reqcpus < 0 {
		return nil, st, slurm.Errorf(file, 1, "the header has no NCPUS, AllocCPUS or ReqCPUS column: a job's CPUs are needed")
	}
	if c.elapsed < 0 && (c.start < 0 || c.end < 0) {
		return nil, st, slurm.Errorf(file, 1, "the header has neither Elapsed nor Start and End: a job's run time is needed")
	}
	var jobs []slurm.Job
	seen := map[int64]int{}
	for {
		b, err := lr.Next()
		if err == io.EOF {
			return jobs, st, nil
		}
		if err != nil {
			return nil, st, err
		}
		n := lr.Line()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		f := strings.Split(string(b), "|")
		if len(f) == c.n+1 && f[c.n] == "" {
			f = f[:c.n]
		}
		if len(f) != c.n {
			return nil, st, slurm.Errorf(file, n, "%d columns; the header has %d", len(f), c.n)
		}
		j, skip, err := c.job(f, file, n)
		if err != nil {
			return nil, st, err
		}
		switch skip {
		case "step":
			st.Steps++
			continue
		case "notrun":
			st.NotRun++
			continue
		case "running":
			st.Running++
			continue
		}
		if first, dup := seen[j.ID]; dup {
			return nil, st, slurm.Errorf(file, n, "job %d again (first on line %d)", j.ID, first)
		}
		if len(jobs) >= maxJobs {
			return nil, st, slurm.Errorf(file, n, "more than %d jobs", maxJobs)
		}
		seen[j.ID] = n
		jobs = append(jobs, j)
	}
}

// job reads one record; skip says why it is left out ("" when kept).
func (c columns) job(f []string, file string, n int) (slurm.Job, string, error) {
	col := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(f[i])
	}
	bad := func(name string, err error) error {
		return slurm.Errorf(file, n, "column %s: %w", name, err)
	}
	j := slurm.Job{Line: n, Start: slurm.Unknown, End: slurm.Unknown, Run: slurm.Unknown}
	idText, idCol := col(c.idRaw), "JobIDRaw"
	if idText == "" {
		idText, idCol = col(c.id), "JobID"
	}
	if strings.ContainsAny(idText, ".") {
		return j, "step", nil
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 0 {
		if strings.ContainsAny(idText, "_+") {
			return j, "", bad(idCol, fmt.Errorf("%s: an array or heterogeneous job's ID; give the JobIDRaw column", slurm.Quote(idText)))
		}
		return j, "", bad(idCol, fmt.Errorf("%s is not a job ID", slurm.Quote(idText)))
	}
	j.ID = id
	if j.Submit, err = parseTime(col(c.submit)); err != nil || j.Submit < 0 {
		if err == nil {
			err = fmt.Errorf("%s: a job needs its submit time", slurm.Quote(col(c.submit)))
		}
		return j, "", bad("Submit", err)
	}
	if j.Start, err = parseTime(col(c.start)); err != nil {
		return j, "", bad("Start", err)
	}
	if j.End, err = parseTime(col(c.end)); err != nil {
		return j, "", bad("End", err)
	}
	if c.elapsed >= 0 {
		if j.Run, err = slurm.Duration(col(c.elapsed)); err != nil {
			return j, "", bad("Elapsed", err)
		}
	}
	if j.Run < 0 && j.Start >= 0 && j.End >= j.Start {
		j.Run = j.End - j.Start
	}
	if j.TimeLimit, err = slurm.Duration(col(c.limit)); err != nil {
		return j, "", bad("Timelimit", err)
	}
	cpus := col(c.ncpus)
	if (cpus == "" || cpus == "0") && c.reqcpus >= 0 {
		cpus = col(c.reqcpus) // a job that never ran has NCPUS 0
	}
	if j.CPUs, err = count(cpus); err != nil {
		return j, "", bad("NCPUS", err)
	}
	nodes := col(c.nnodes)
	if (nodes == "" || nodes == "0") && c.reqnodes >= 0 {
		nodes = col(c.reqnodes)
	}
	if nodes != "" {
		if j.Nodes, err = count(nodes); err != nil {
			return j, "", bad("NNodes", err)
		}
	}
	if m := col(c.reqmem); m != "" && m != "0" {
		if j.Mem, err = slurm.ParseMemory(m, slurm.PerNode); err != nil {
			return j, "", bad("ReqMem", err)
		}
	}
	gres := col(c.reqgres)
	if gres == "" {
		gres = col(c.reqtres)
	}
	if j.GPUs, err = slurm.GPUs(gres); err != nil {
		return j, "", bad("ReqGRES", err)
	}
	for _, s := range []struct {
		i    int
		to   *string
		name string
	}{{c.partition, &j.Partition, "Partition"}, {c.qos, &j.QOS, "QOS"}, {c.user, &j.User, "User"}, {c.account, &j.Account, "Account"}} {
		if v := col(s.i); v != "" {
			if err := slurm.CheckName(s.name, v); err != nil {
				return j, "", bad(s.name, err)
			}
			*s.to = v
		}
	}
	j.Name, j.NodeList, j.Constraint = col(c.name), col(c.nodelist), col(c.constraints)
	for _, v := range []struct{ name, val string }{{"JobName", j.Name}, {"NodeList", j.NodeList}} {
		if strings.ContainsFunc(v.val, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return j, "", bad(v.name, fmt.Errorf("%s holds a control character", slurm.Quote(v.val)))
		}
	}
	if j.Constraint == "(null)" {
		j.Constraint = ""
	}
	if j.Constraint != "" {
		if _, err := slurm.Constraint(j.Constraint); err != nil {
			return j, "", bad("Constraints", err)
		}
	}
	if st := strings.Fields(col(c.state)); len(st) > 0 {
		j.State = st[0] // "CANCELLED by 0" is CANCELLED
	}
	switch {
	case j.Start < 0 || j.State == "PENDING":
		return j, "notrun", nil
	case j.Run < 0 || j.State == "RUNNING":
		return j, "running", nil
	}
	return j, "", nil
}

// parseTime reads a sacct time as UTC Unix seconds; "", Unknown and
// None are slurm.Unknown.
func parseTime(s string) (int64, error) {
	switch s {
	case "", "Unknown", "None":
		return slurm.Unknown, nil
	}
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return 0, fmt.Errorf("%s: want a time like 2021-02-11T22:36:19", slurm.Quote(s))
	}
	return t.Unix(), nil
}

// count reads a positive count of at most 2^30.
func count(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > 1<<30 {
		return 0, fmt.Errorf("%s: want a count from 1 to 2^30", slurm.Quote(s))
	}
	return int(v), nil
}
