package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/event"
)

// The crash test re-runs this test binary as a child that appends until
// it is killed; these variables tell it so.
const (
	envCrashPath = "XCE_STORE_CRASH_CHILD"
	envCrashRun  = "XCE_STORE_CRASH_RUN"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashPath); path != "" {
		if err := crashChild(path, os.Getenv(envCrashRun)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild appends from 4 writers until it is killed: writer w's call
// seq holds n = 1 + (w+seq)%3 events named "r<run>.w<w>.<seq>.<j>/<n>",
// and once acknowledged is printed as one line "<indexes> <name of the
// call>" (indexes joined by commas). Writer 0 saves a snapshot every 25
// calls.
func crashChild(path, run string) error {
	s, err := Open(path, Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	var out sync.Mutex
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for seq := 0; ; seq++ {
				n := 1 + (w+seq)%3
				call := fmt.Sprintf("r%s.w%d.%d", run, w, seq)
				evs := make([]event.Event, n)
				for j := range evs {
					evs[j] = submit(int64(seq))
					evs[j].Submit.Name = fmt.Sprintf("%s.%d/%d", call, j, n)
				}
				idx, err := s.Append(context.Background(), evs...)
				if err != nil {
					errs <- err
					return
				}
				strs := make([]string, len(idx))
				for k, i := range idx {
					strs[k] = strconv.FormatUint(i, 10)
				}
				out.Lock()
				_, err = fmt.Fprintf(os.Stdout, "%s %s\n", strings.Join(strs, ","), call) // one write
				out.Unlock()
				if err != nil {
					errs <- err
					return
				}
				if w == 0 && seq%25 == 24 {
					if err := s.SaveSnapshot(idx[0], []byte(call)); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	return <-errs
}

// ack is one acknowledged call, as the child printed it.
type ack struct {
	indexes []uint64
	call    string
}

func parseAck(line string) (ack, error) {
	idx, call, ok := strings.Cut(line, " ")
	if !ok {
		return ack{}, fmt.Errorf("line %q", line)
	}
	var a ack
	a.call = call
	for _, f := range strings.Split(idx, ",") {
		i, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return ack{}, fmt.Errorf("line %q: %w", line, err)
		}
		a.indexes = append(a.indexes, i)
	}
	return a, nil
}

// crashOnce starts a child appending to path, kills it with SIGKILL after
// it acknowledged its first call and a random delay (or, with early,
// after a random delay from its start), and returns what it acknowledged.
// With probe, an Open while the child runs must fail with ErrLocked.
func crashOnce(t *testing.T, path string, run int, rng *rand.Rand, early, probe bool) []ack {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashPath+"="+path, envCrashRun+"="+strconv.Itoa(run))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	lines := make(chan string, 1024)
	readDone := make(chan []ack, 1)
	go func() {
		var acks []ack
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			a, err := parseAck(sc.Text())
			if err != nil { // only a line cut by the kill could be
				t.Errorf("child %d: %v", pid, err)
				continue
			}
			acks = append(acks, a)
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		readDone <- acks
	}()
	if early {
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
	} else {
		select {
		case <-lines:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d acknowledged nothing in 30 s; stderr: %s", pid, stderr.String())
		}
		if probe {
			s, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, ErrLocked) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("Open while child %d has the store: %v, want ErrLocked", pid, err)
			}
		}
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	var acks []ack
	select {
	case acks = <-readDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("child %d's stdout still open 30 s after SIGKILL", pid)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child %d ended with %v, not by our SIGKILL; stderr: %s", pid, err, stderr.String())
	}
	return acks
}

// TestCrashDurability: a child appending from 4 writers is killed with
// SIGKILL at a random moment, 12 times on one file. After each kill the
// reopened log holds every acknowledged call at the indexes it was
// given, is dense and readable, holds every call's events whole and
// contiguous (acknowledged or not), and each writer's calls in its order.
// While the first child runs, a second Open fails with ErrLocked.
//
// SIGKILL tests the store's atomicity and recovery after a process
// crash; the page cache survives it, so it does not test fsync against
// a power loss.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary 12 times")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(t.TempDir(), "log.db")
	total := 0
	for run := range 12 {
		acks := crashOnce(t, path, run, rng, run%4 == 3, run == 0)
		total += len(acks)
		s, err := Open(path, Options{LockTimeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("run %d: reopen: %v", run, err)
		}
		checkCrashLog(t, s, run, acks)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if total == 0 {
		t.Fatal("the children acknowledged nothing")
	}
	t.Logf("%d acknowledged calls over 12 kills", total)
}

// checkCrashLog checks the log after run's kill.
func checkCrashLog(t *testing.T, s *Store, run int, acks []ack) {
	t.Helper()
	var log []event.Event
	if err := s.Read(1, func(e event.Event) error { log = append(log, e); return nil }); err != nil {
		t.Fatalf("run %d: Read: %v", run, err)
	}
	if uint64(len(log)) != s.Last() {
		t.Fatalf("run %d: %d events, Last %d", run, len(log), s.Last())
	}
	for _, a := range acks {
		for j, i := range a.indexes {
			want := fmt.Sprintf("%s.%d/%d", a.call, j, len(a.indexes))
			if i == 0 || i > uint64(len(log)) || log[i-1].Submit.Name != want {
				t.Fatalf("run %d: acknowledged %s is not at index %d", run, want, i)
			}
		}
	}
	// Every call whole and contiguous; each writer's calls in order.
	lastSeq := map[string]int{}
	for k := 0; k < len(log); {
		e := log[k]
		if e.Index != uint64(k+1) {
			t.Fatalf("run %d: event %d has index %d", run, k+1, e.Index)
		}
		name := e.Submit.Name
		dot := strings.LastIndexByte(name, '.')
		slash := strings.LastIndexByte(name, '/')
		call := name[:dot]
		n, err := strconv.Atoi(name[slash+1:])
		if err != nil || name[dot+1:slash] != "0" {
			t.Fatalf("run %d: event %d (%s) does not start a call", run, k+1, name)
		}
		for j := range n {
			if k+j >= len(log) || log[k+j].Submit.Name != fmt.Sprintf("%s.%d/%d", call, j, n) {
				t.Fatalf("run %d: call %s is not whole at %d", run, call, k+1)
			}
		}
		writer := call[:strings.LastIndexByte(call, '.')]
		seq := int(log[k].Submit.Job)
		if prev, ok := lastSeq[writer]; ok && seq <= prev {
			t.Fatalf("run %d: %s call %d after call %d", run, writer, seq, prev)
		}
		lastSeq[writer] = seq
		k += n
	}
	index, data, ok, err := s.Snapshot()
	if err != nil || ok && (index == 0 || index > s.Last() || len(data) == 0) {
		t.Fatalf("run %d: Snapshot = %d %q %v %v", run, index, data, ok, err)
	}
}
