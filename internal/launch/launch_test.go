//go:build linux

package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xce-sched/xce/internal/event"
)

func TestExitCodes(t *testing.T) {
	for _, code := range []string{"0", "3"} {
		t.Run(code, func(t *testing.T) {
			leakCheck(t)
			dir := t.TempDir()
			s := testSpec(dir)
			s.Command = []string{"sh", "-c", "exit " + code}
			r := run(t, s)
			if want := map[string]int{"0": 0, "3": 3}[code]; r.ExitCode != want || r.Signal != "" {
				t.Errorf("exit %d signal %q, want %d and none", r.ExitCode, r.Signal, want)
			}
			if r.Killed || r.Start.IsZero() || r.End.Before(r.Start) {
				t.Errorf("killed %v, start %v, end %v", r.Killed, r.Start, r.End)
			}
		})
	}
}

func TestCommandNotFound(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"xce-no-such-command"}
	if r := run(t, s); r.ExitCode != 127 {
		t.Errorf("exit %d, want 127 (the shell's command not found)", r.ExitCode)
	}
	if out := readFile(t, filepath.Join(dir, "xce-42.out")); !strings.Contains(out, "not found") {
		t.Errorf("output %q, want the shell's message", out)
	}
}

func TestSignalDeath(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"sh", "-c", "kill -TERM $$; sleep 10"}
	r := run(t, s)
	if r.Signal != "SIGTERM" || r.ExitCode != 128+int(syscall.SIGTERM) || r.Killed {
		t.Errorf("signal %q exit %d killed %v, want SIGTERM, 143, false", r.Signal, r.ExitCode, r.Killed)
	}
}

func TestEnvironment(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Hosts = []string{"a", "a", "b"}
	s.Env = append(s.Env, "FOO=bar baz", "LSB_JOBID=999", "XCE_QUEUE=stale")
	s.Command = []string{"env"}
	run(t, s)
	got := strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(dir, "xce-42.out")), "\n"), "\n")
	want := []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + dir,
		"FOO=bar baz",
		"XCE_JOBID=42",
		"XCE_JOBNAME=t",
		"XCE_QUEUE=normal",
		"XCE_HOSTS=a a b",
		"LSB_JOBID=42",
		"LSB_JOBNAME=t",
		"LSB_QUEUE=normal",
		"LSB_HOSTS=a a b",
		"LSB_MCPU_HOSTS=a 2 b 1",
		"PWD=" + dir, // the working directory, as a shell would export it
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("environment:\n got %q\nwant %q", got, want)
	}
}

func TestMCPUHosts(t *testing.T) {
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{[]string{"a", "a", "b"}, "a 2 b 1"},
		{[]string{"a", "b", "a"}, "a 2 b 1"},
		{[]string{"x"}, "x 1"},
	} {
		if got := mcpuHosts(c.hosts); got != c.want {
			t.Errorf("mcpuHosts(%q) = %q, want %q", c.hosts, got, c.want)
		}
	}
}

func TestFromEvents(t *testing.T) {
	sub := &event.Submit{Job: 7, User: "alice", UID: 1000, GID: 100, Name: "n", Queue: "q",
		Command: []string{"a.out"}, Cwd: "/home/alice", Env: []string{"X=1"}, Stdout: "o.%J", Stderr: "e.%J"}
	pl := &event.Placement{Job: 7, Attempt: 2, Hosts: []event.HostAlloc{{Host: "h1", Slots: 2}, {Host: "h2", Slots: 1}}}
	got := FromEvents(sub, pl)
	want := Spec{Job: 7, Attempt: 2, Name: "n", Queue: "q", Command: []string{"a.out"}, Cwd: "/home/alice",
		Env: []string{"X=1"}, Stdout: "o.%J", Stderr: "e.%J", Hosts: []string{"h1", "h1", "h2"},
		User: "alice", UID: 1000, GID: 100}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromEvents:\n got %+v\nwant %+v", got, want)
	}
}

func TestJobNameDefault(t *testing.T) {
	s := testSpec("/tmp")
	s.Name = ""
	s.Command = []string{"sleep", "5"}
	if env := s.jobEnv(); !slices.Contains(env, "LSB_JOBNAME=sleep 5") || !slices.Contains(env, "XCE_JOBNAME=sleep 5") {
		t.Errorf("environment %q: want the command line as job name", env)
	}
}

func TestCwd(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	cwd := filepath.Join(dir, "sub dir")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	s := testSpec(cwd)
	s.Stdout = filepath.Join(dir, "out")
	s.Command = []string{"pwd", "-P"}
	run(t, s)
	want, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, s.Stdout); got != want+"\n" {
		t.Errorf("pwd %q, want %q", got, want)
	}
}

func TestOutputFiles(t *testing.T) {
	const job = `echo to-out; echo to-err >&2`
	t.Run("expand and split", func(t *testing.T) {
		leakCheck(t)
		dir := t.TempDir()
		s := testSpec(dir)
		s.Stdout = "out.%J.%I"
		s.Stderr = filepath.Join(dir, "err.%J.%x")
		s.Command = []string{"sh", "-c", job}
		p := startT(t, s)
		wantOut, wantErr := filepath.Join(dir, "out.42.0"), filepath.Join(dir, "err.42.%x")
		if o, e := p.Output(); o != wantOut || e != wantErr {
			t.Errorf("Output() = %q, %q, want %q, %q", o, e, wantOut, wantErr)
		}
		if r := waitT(t, p, jobTimeout); r.ExitCode != 0 || r.Err != nil {
			t.Fatalf("result %+v", r)
		}
		if got := readFile(t, wantOut); got != "to-out\n" {
			t.Errorf("stdout %q", got)
		}
		if got := readFile(t, wantErr); got != "to-err\n" {
			t.Errorf("stderr %q", got)
		}
	})
	t.Run("default file holds both", func(t *testing.T) {
		leakCheck(t)
		dir := t.TempDir()
		s := testSpec(dir)
		s.Command = []string{"sh", "-c", job}
		run(t, s)
		if got := readFile(t, filepath.Join(dir, "xce-42.out")); got != "to-out\nto-err\n" {
			t.Errorf("xce-42.out %q", got)
		}
	})
	t.Run("-e names the -o file", func(t *testing.T) {
		leakCheck(t)
		dir := t.TempDir()
		s := testSpec(dir)
		s.Stdout, s.Stderr = "o.%J", filepath.Join(dir, "o.42")
		s.StdoutOverwrite, s.StderrOverwrite = true, true
		s.Command = []string{"sh", "-c", job}
		run(t, s)
		if got := readFile(t, filepath.Join(dir, "o.42")); got != "to-out\nto-err\n" {
			t.Errorf("o.42 %q", got)
		}
	})
	t.Run("-o appends, -oo overwrites", func(t *testing.T) {
		leakCheck(t)
		dir := t.TempDir()
		s := testSpec(dir)
		s.Stdout = "o"
		for attempt, word := range []string{"one", "two"} {
			s.Attempt = attempt + 1
			s.Command = []string{"echo", word}
			run(t, s)
		}
		if got := readFile(t, filepath.Join(dir, "o")); got != "one\ntwo\n" {
			t.Errorf("-o twice: %q, want both", got)
		}
		s.StdoutOverwrite = true
		s.Command = []string{"echo", "three"}
		run(t, s)
		if got := readFile(t, filepath.Join(dir, "o")); got != "three\n" {
			t.Errorf("-oo: %q, want the last only", got)
		}
	})
	t.Run("fifo without reader", func(t *testing.T) {
		leakCheck(t)
		dir := t.TempDir()
		s := testSpec(dir)
		s.Stdout = filepath.Join(dir, "fifo")
		if err := unix.Mkfifo(s.Stdout, 0o600); err != nil {
			t.Fatal(err)
		}
		s.Command = []string{"true"}
		_, err := Start(context.Background(), s)
		if !errors.Is(err, ErrOutput) || !errors.Is(err, unix.ENXIO) {
			t.Errorf("Start: %v, want ErrOutput and ENXIO", err)
		}
	})
}

func TestScript(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Script = `#!/bin/bash
#BSUB -J other
#BSUB -o bsub.out
echo "shell=$(readlink /proc/$$/exe)"
echo "job=$LSB_JOBID"
echo "modes=$(stat -c %a "$0") $(stat -c %a "$(dirname "$0")")"
exit 5
`
	p := startT(t, s)
	r := waitT(t, p, jobTimeout)
	if r.ExitCode != 5 || r.Err != nil {
		t.Fatalf("result %+v, want exit 5", r)
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	want := "shell=" + sh + "\njob=42\nmodes=600 700\n"
	if got := readFile(t, filepath.Join(dir, "xce-42.out")); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "bsub.out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bsub.out: %v: #BSUB lines are comments to the launcher", err)
	}
	if _, err := os.Stat(workDir(s.WorkBase, 42, 1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("work directory after Wait: %v, want removed", err)
	}
	if fi, err := os.Stat(s.WorkBase); err != nil || fi.Mode().Perm() != 0o711 {
		t.Errorf("work base: %v %v, want mode 0711", fi.Mode(), err)
	}
}

func TestScriptWorkDirExists(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Script = "exit 0\n"
	stale := workDir(s.WorkBase, 42, 1)
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), s); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Start: %v, want fs.ErrExist", err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the existing directory was touched: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	for name, c := range map[string]func(*Spec){
		"no command":          func(s *Spec) { s.Command = nil },
		"command and script":  func(s *Spec) { s.Script = "true" },
		"relative cwd":        func(s *Spec) { s.Cwd = "rel" },
		"no hosts":            func(s *Spec) { s.Hosts = nil },
		"host with a space":   func(s *Spec) { s.Hosts = []string{"a b"} },
		"bad environment":     func(s *Spec) { s.Env = []string{"NOVALUE"} },
		"job 0":               func(s *Spec) { s.Job = 0 },
		"attempt 0":           func(s *Spec) { s.Attempt = 0 },
		"script without base": func(s *Spec) { s.Command, s.Script, s.WorkBase = nil, "true", "" },
		"NUL in an argument":  func(s *Spec) { s.Command = []string{"echo", "a\x00b"} },
	} {
		s := testSpec(dir)
		s.Command = []string{"true"}
		c(&s)
		if _, err := Start(context.Background(), s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}

	s := testSpec(dir)
	s.Command = []string{"true"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	s = testSpec(filepath.Join(dir, "missing"))
	s.Stdout = filepath.Join(dir, "out")
	s.Script = "true\n"
	s.WorkBase = filepath.Join(dir, "work")
	if _, err := Start(context.Background(), s); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cwd: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(workDir(s.WorkBase, 42, 1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("work directory after a failed start: %v, want none", err)
	}
}

// TestWaitTwice: Wait from several goroutines gives one result.
func TestWaitTwice(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	s := testSpec(dir)
	s.Command = []string{"sh", "-c", "exit 7"}
	p := startT(t, s)
	results := make(chan Result, 2)
	for range 2 {
		go func() { results <- p.Wait() }()
	}
	for range 2 {
		select {
		case r := <-results:
			if r.ExitCode != 7 {
				t.Errorf("exit %d, want 7", r.ExitCode)
			}
		case <-time.After(jobTimeout):
			t.Fatal("Wait did not return")
		}
	}
}

// TestArrayElementEnv: element 3 of array 12 (its own job ID 14) gets
// LSF's LSB_JOBID (the array's) and LSB_JOBINDEX, xce's own and array IDs,
// and %J/%I expand to the array's ID and the index, as LSF's -o does. A
// job that is no element has no index variables and %I is 0.
func TestArrayElementEnv(t *testing.T) {
	s := testSpec("/tmp")
	s.Job, s.ArrayJob, s.ArrayIndex = 14, 12, 3
	s.Stdout, s.Stderr = "out.%J.%I", "/abs/err.%J_%I"
	env := s.jobEnv()
	for _, want := range []string{"XCE_JOBID=14", "LSB_JOBID=12", "XCE_ARRAY_JOBID=12", "XCE_ARRAY_INDEX=3", "LSB_JOBINDEX=3"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %s", env, want)
		}
	}
	if out, errp := s.outputPaths(); out != "/tmp/out.12.3" || errp != "/abs/err.12_3" {
		t.Errorf("output paths %q %q, want /tmp/out.12.3 /abs/err.12_3", out, errp)
	}
	s.ArrayJob, s.ArrayIndex = 0, 0
	env = s.jobEnv()
	if !slices.Contains(env, "LSB_JOBID=14") || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "LSB_JOBINDEX=") }) {
		t.Errorf("environment %q: want LSB_JOBID=14 and no index", env)
	}
	if out, _ := s.outputPaths(); out != "/tmp/out.14.0" {
		t.Errorf("output path %q, want /tmp/out.14.0", out)
	}
	sub := &event.Submit{Job: 14, ArrayJob: 12, ArrayIndex: 3}
	if got := FromEvents(sub, &event.Placement{Job: 14, Attempt: 1}); got.ArrayJob != 12 || got.ArrayIndex != 3 {
		t.Errorf("FromEvents: array %d index %d", got.ArrayJob, got.ArrayIndex)
	}
}

// TestGPUEnv: a job holding g1's devices 0 and 2 (its first host, where
// its command runs) and g2's 1 sees CUDA_VISIBLE_DEVICES=0,2, XCE_GPUS
// with every host's and its mode; a stale value from the submit
// environment is replaced, and a job holding no GPU has none of them.
func TestGPUEnv(t *testing.T) {
	sub := &event.Submit{Job: 5, GPU: "num=2:mode=exclusive_process", Command: []string{"x"}, Cwd: "/",
		Env: []string{"CUDA_VISIBLE_DEVICES=7", "XCE_GPUS=stale", "KEEP=1"}}
	pl := &event.Placement{Job: 5, Attempt: 1, Hosts: []event.HostAlloc{{Host: "g1", Slots: 2, GPUs: []int{0, 2}}, {Host: "c1", Slots: 1}, {Host: "g2", Slots: 1, GPUs: []int{1}}}}
	s := FromEvents(sub, pl)
	if want := []HostGPUs{{"g1", []int{0, 2}}, {"g2", []int{1}}}; !reflect.DeepEqual(s.GPUs, want) || s.GPUMode != "exclusive_process" {
		t.Fatalf("FromEvents: GPUs %+v mode %q", s.GPUs, s.GPUMode)
	}
	env := s.jobEnv()
	for _, want := range []string{"CUDA_VISIBLE_DEVICES=0,2", "XCE_GPUS=g1:0,2 g2:1", "XCE_GPU_MODE=exclusive_process", "KEEP=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %s", env, want)
		}
	}
	if slices.Contains(env, "CUDA_VISIBLE_DEVICES=7") || slices.Contains(env, "XCE_GPUS=stale") {
		t.Errorf("environment %q keeps the submit environment's GPU variables", env)
	}
	// The rusage[ngpus_physical] form: shared mode. Devices on other
	// hosts only: the first host shows none.
	s = FromEvents(&event.Submit{Job: 6, Command: []string{"x"}, Cwd: "/"}, &event.Placement{Job: 6, Attempt: 1,
		Hosts: []event.HostAlloc{{Host: "c1", Slots: 1}, {Host: "g2", Slots: 1, GPUs: []int{0}}}})
	env = s.jobEnv()
	for _, want := range []string{"CUDA_VISIBLE_DEVICES=", "XCE_GPUS=g2:0", "XCE_GPU_MODE=shared"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %s", env, want)
		}
	}
	// No GPU: none of the variables, not even the submit environment's.
	s = FromEvents(&event.Submit{Job: 7, Command: []string{"x"}, Cwd: "/", Env: []string{"CUDA_VISIBLE_DEVICES=3"}},
		&event.Placement{Job: 7, Attempt: 1, Hosts: []event.HostAlloc{{Host: "c1", Slots: 1}}})
	if env = s.jobEnv(); slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") || strings.HasPrefix(kv, "XCE_GPU")
	}) {
		t.Errorf("a job without GPUs has %q", env)
	}
}
