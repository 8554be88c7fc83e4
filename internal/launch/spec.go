//go:build linux

package launch

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/internal/event"
)

// DefaultStdout is the output file of a job submitted without -o, relative
// to its working directory: LSF mails such output instead, Slurm writes
// slurm-%j.out in the submit directory; xce writes xce-<job>.out there.
const DefaultStdout = "xce-%J.out"

// Errors returned (wrapped) by Start; errors.Is tells them apart.
var (
	// ErrInvalid: the Spec is malformed (a missing or contradictory field).
	ErrInvalid = errors.New("invalid job spec")
	// ErrIdentity: the job's user cannot be run here: unknown to the user
	// database, a name that does not match the uid, or, when the agent is
	// not root, a uid or gid other than the agent's own.
	ErrIdentity = errors.New("job identity refused")
	// ErrRoot: the job would run as uid 0 and Spec.AllowRoot is false.
	ErrRoot = errors.New("job as root refused")
	// ErrOutput: an output file could not be opened as the job's user; the
	// wrapped error says why (errors.Is(err, fs.ErrPermission) for a
	// directory or file the user may not write).
	ErrOutput = errors.New("job output file")
)

// Spec is one attempt of a job on this host, as Start runs it.
type Spec struct {
	// Job is the job's id (> 0) and Attempt its attempt: 1 for its first
	// start, one more for each requeue.
	Job     int64
	Attempt int
	// Name (-J) and Queue (-q) are given to the job in its environment. An
	// empty Name becomes the command line (LSF's default job name), or the
	// empty string for a script.
	Name  string
	Queue string
	// Command is the command and its arguments; Script, when set instead,
	// is a job script run by /bin/sh. Exactly one of them is set.
	Command []string
	Script  string
	// Cwd is the job's working directory: absolute, and entered as the
	// job's user.
	Cwd string
	// Env is the submit environment, NAME=value; Start adds the XCE_ and
	// LSB_ variables (docs/launch.md) in place of any of the same name.
	Env []string
	// Stdout (-o) and Stderr (-e) are output file paths, absolute or
	// relative to Cwd, with %J (the job id; an element's array's) and %I
	// (an element's array index, else 0) expanded, as LSF expands them. An empty Stdout is DefaultStdout; an empty Stderr, or one
	// equal to Stdout, shares Stdout's file. Files are appended to (-o,
	// -e) unless StdoutOverwrite (-oo) or StderrOverwrite (-eo) truncates
	// them.
	Stdout, Stderr                   string
	StdoutOverwrite, StderrOverwrite bool
	// Hosts names the job's hosts, one entry per slot, first host first
	// (LSB_HOSTS): a host with 2 slots appears twice.
	Hosts []string
	// User is the submitter's name (checked against UID's name in the
	// user database when set); UID and GID its ids. The job runs as
	// UID:GID with the user's supplementary groups.
	User     string
	UID, GID uint32
	// AllowRoot lets a job run as uid 0.
	AllowRoot bool
	// WorkBase is the agent's directory for per-job work directories,
	// absolute; needed for a Script only (created 0711 when missing).
	WorkBase string
	// ArrayJob and ArrayIndex: for an element of a job array, the array's
	// ID and the element's index (docs/arrays.md); 0 otherwise.
	ArrayJob, ArrayIndex int64
	// GPUs are the devices the job holds, per host, in the placement's
	// order (hosts where it holds none left out); GPUMode is the compute
	// mode it asked for (-gpu mode=; "" means "shared"). A job that
	// holds GPUs gets CUDA_VISIBLE_DEVICES, XCE_GPUS and XCE_GPU_MODE
	// (docs/gpus.md).
	GPUs    []HostGPUs
	GPUMode string
}

// HostGPUs is the devices (indices of the host's GPUs) a job holds on one
// host.
type HostGPUs struct {
	Host    string
	Devices []int
}

// FromEvents returns the Spec of attempt pl.Attempt of job sub.Job as the
// submit and placement events give it; WorkBase is left to the caller.
// -oo and -eo are not in the submit event: the Spec appends.
func FromEvents(sub *event.Submit, pl *event.Placement) Spec {
	return Spec{
		Job:     sub.Job,
		Attempt: pl.Attempt,
		Name:    sub.Name,
		Queue:   sub.Queue,
		Command: sub.Command,
		Script:  sub.Script,
		Cwd:     sub.Cwd,
		Env:     sub.Env,
		Stdout:  sub.Stdout,
		Stderr:  sub.Stderr,
		Hosts:   HostsOf(pl.Hosts),
		User:    sub.User,
		UID:     sub.UID,
		GID:     sub.GID,

		ArrayJob:   sub.ArrayJob,
		ArrayIndex: sub.ArrayIndex,

		GPUs:    gpusOf(pl.Hosts),
		GPUMode: gpuMode(sub.GPU),
	}
}

// gpusOf returns the devices a placement's hosts hold, in its order.
func gpusOf(hosts []event.HostAlloc) []HostGPUs {
	var out []HostGPUs
	for _, h := range hosts {
		if len(h.GPUs) > 0 {
			out = append(out, HostGPUs{Host: h.Host, Devices: h.GPUs})
		}
	}
	return out
}

// gpuMode returns the compute mode a submit's -gpu asks for: "" without
// -gpu (the rusage[ngpus_physical] form: jobEnv says "shared"), "shared"
// when it does not parse (the server checked it).
func gpuMode(gpu string) string {
	if gpu == "" {
		return ""
	}
	r, _ := gpureq.Parse(gpu) // Default on error
	return r.Mode.String()
}

// HostsOf returns a placement's hosts one entry per slot, in the
// placement's order (the Spec.Hosts form).
func HostsOf(hosts []event.HostAlloc) []string {
	var out []string
	for _, h := range hosts {
		for range h.Slots {
			out = append(out, h.Host)
		}
	}
	return out
}

// validate returns an error wrapping ErrInvalid for a malformed spec.
func (s *Spec) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case s.Job <= 0:
		return bad("job id %d, want > 0", s.Job)
	case s.Attempt < 1:
		return bad("attempt %d, want >= 1", s.Attempt)
	case len(s.Command) == 0 && s.Script == "":
		return bad("no command and no script")
	case len(s.Command) > 0 && s.Script != "":
		return bad("both a command and a script")
	case !filepath.IsAbs(s.Cwd):
		return bad("working directory %q is not absolute", s.Cwd)
	case len(s.Hosts) == 0:
		return bad("no hosts")
	case s.Script != "" && !filepath.IsAbs(s.WorkBase):
		return bad("work base %q is not absolute", s.WorkBase)
	}
	for _, h := range s.Hosts {
		if h == "" || strings.ContainsAny(h, " \t\n\x00") {
			return bad("host name %q", h)
		}
	}
	for _, g := range s.GPUs {
		if g.Host == "" || strings.ContainsAny(g.Host, " \t\n\x00:") {
			return bad("GPU host name %q", g.Host)
		}
		for _, d := range g.Devices {
			if d < 0 || d >= gpureq.MaxDevices {
				return bad("GPU %d on %s", d, g.Host)
			}
		}
	}
	for _, kv := range s.Env {
		if i := strings.IndexByte(kv, '='); i <= 0 {
			return bad("environment entry %q is not NAME=value", kv)
		}
	}
	strs := append([]string{s.Name, s.Queue, s.Script, s.Cwd, s.Stdout, s.Stderr, s.WorkBase}, s.Command...)
	for _, v := range append(strs, s.Env...) {
		if strings.IndexByte(v, 0) >= 0 {
			return bad("NUL byte in %q", v)
		}
	}
	return nil
}

// expand replaces %J with the job id and %I with the array index (0 for
// a job that is no element), as LSF does in -o and -e; other % sequences
// stay.
func expand(path string, job, index int64) string {
	return strings.NewReplacer("%J", strconv.FormatInt(job, 10), "%I", strconv.FormatInt(index, 10)).Replace(path)
}

// lsfJob returns the job ID LSF shows for s: an element's array's ID, else
// the job's own.
func (s *Spec) lsfJob() int64 {
	if s.ArrayJob != 0 {
		return s.ArrayJob
	}
	return s.Job
}

// outputPaths returns the absolute stdout and stderr paths of s.
func (s *Spec) outputPaths() (stdout, stderr string) {
	abs := func(p string) string {
		p = expand(p, s.lsfJob(), s.ArrayIndex)
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Cwd, p)
		}
		return filepath.Clean(p)
	}
	out := s.Stdout
	if out == "" {
		out = DefaultStdout
	}
	stdout = abs(out)
	stderr = stdout
	if s.Stderr != "" {
		stderr = abs(s.Stderr)
	}
	return stdout, stderr
}

// jobName is the LSB_JOBNAME of s: Name, else the command line.
func (s *Spec) jobName() string {
	if s.Name != "" {
		return s.Name
	}
	return strings.Join(s.Command, " ")
}

// mcpuHosts returns LSB_MCPU_HOSTS for hosts listed one per slot: each
// host once, in order of first appearance, followed by its slot count
// ("a 2 b 1" for [a a b]).
func mcpuHosts(hosts []string) string {
	var order []string
	count := make(map[string]int)
	for _, h := range hosts {
		if count[h] == 0 {
			order = append(order, h)
		}
		count[h]++
	}
	parts := make([]string, 0, 2*len(order))
	for _, h := range order {
		parts = append(parts, h, strconv.Itoa(count[h]))
	}
	return strings.Join(parts, " ")
}

// gpuEnv returns CUDA_VISIBLE_DEVICES, the devices the job holds on its
// first host, where its command runs ("0,1"; "" when it holds none
// there), and XCE_GPUS, the devices on every host that has some, in the
// placement's order ("g1:0,1 g2:3").
func (s *Spec) gpuEnv() (visible, all string) {
	list := func(devs []int) string {
		parts := make([]string, len(devs))
		for i, d := range devs {
			parts[i] = strconv.Itoa(d)
		}
		return strings.Join(parts, ",")
	}
	parts := make([]string, len(s.GPUs))
	for i, g := range s.GPUs {
		parts[i] = g.Host + ":" + list(g.Devices)
		if len(s.Hosts) > 0 && g.Host == s.Hosts[0] && visible == "" {
			visible = list(g.Devices)
		}
	}
	return visible, strings.Join(parts, " ")
}

// jobEnv returns the job's environment: the submit environment without
// the variables xce sets, then those variables.
func (s *Spec) jobEnv() []string {
	id := strconv.FormatInt(s.Job, 10)
	name := s.jobName()
	hosts := strings.Join(s.Hosts, " ")
	set := [][2]string{
		{"XCE_JOBID", id},
		{"XCE_JOBNAME", name},
		{"XCE_QUEUE", s.Queue},
		{"XCE_HOSTS", hosts},
		{"LSB_JOBID", strconv.FormatInt(s.lsfJob(), 10)},
		{"LSB_JOBNAME", name},
		{"LSB_QUEUE", s.Queue},
		{"LSB_HOSTS", hosts},
		{"LSB_MCPU_HOSTS", mcpuHosts(s.Hosts)},
		{"PWD", s.Cwd}, // as a shell sets it, even when the command runs without one
	}
	if s.ArrayJob != 0 {
		index := strconv.FormatInt(s.ArrayIndex, 10)
		set = append(set, [2]string{"XCE_ARRAY_JOBID", strconv.FormatInt(s.ArrayJob, 10)},
			[2]string{"XCE_ARRAY_INDEX", index}, [2]string{"LSB_JOBINDEX", index})
	}
	if len(s.GPUs) > 0 {
		visible, all := s.gpuEnv()
		mode := s.GPUMode
		if mode == "" {
			mode = gpureq.Shared.String()
		}
		set = append(set, [2]string{"CUDA_VISIBLE_DEVICES", visible}, [2]string{"XCE_GPUS", all}, [2]string{"XCE_GPU_MODE", mode})
	}
	ours := make(map[string]bool, len(set)+3)
	for _, kv := range set {
		ours[kv[0]] = true
	}
	// The GPU variables are xce's for every job: a job without GPUs does
	// not inherit a submitting shell's (another job's) devices.
	ours["CUDA_VISIBLE_DEVICES"], ours["XCE_GPUS"], ours["XCE_GPU_MODE"] = true, true, true
	env := make([]string, 0, len(s.Env)+len(set))
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		if !ours[name] {
			env = append(env, kv)
		}
	}
	for _, kv := range set {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env
}
