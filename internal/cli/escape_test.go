package cli

import (
	"bytes"
	"errors"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/sim"
)

// TestSafe: control characters, unprintable characters and bytes that are
// not UTF-8 are written as escapes; printable text (non-ASCII, spaces and
// backslashes included) is kept.
func TestSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain job-1 a/b.out", "plain job-1 a/b.out"},
		{"a\nb", `a\nb`},
		{"a\tb\rc", `a\tb\rc`},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u0085\u009b", `\u0085\u009b`}, // C1: NEL, CSI
		{"evil\u202etxt.sh", `evil\u202etxt.sh`},
		{"a\u2028b", `a\u2028b`},
		{"\xff\xfe", `\xff\xfe`},
		{"été 日本 \\n", "été 日本 \\n"},
	} {
		if got := safe(c.in); got != c.want {
			t.Errorf("safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// evil is a job whose user-given strings would drive a terminal: a name
// that clears the screen, a command with a newline, a stdout path with
// an escape, a reason quoting a name with a bidirectional override.
func evil() api.JobInfo {
	return api.JobInfo{ID: 7, Job: 7, Name: "x\n\x1b[2Jy", User: "alice", Queue: "normal", State: "PEND",
		Reason: "Dependency", Detail: "done(\"a\u202eb\")", TasksMin: 1, TasksMax: 1, ResReq: "select[mem>1]",
		Command: []string{"echo", "a\nb"}, Stdout: "/tmp/\x1b]0;t\x07",
		HostReasons: []live.HostReason{{Text: "not enough\tslots", Hosts: 2}}}
}

// TestPrintEscapes: every command that prints what a user gave prints
// it escaped (each expected line written by hand from safe's rules): no
// byte of the output is a control character but the newlines that end
// its lines.
func TestPrintEscapes(t *testing.T) {
	const name = `x\n\x1b[2Jy`
	start := int64(1800000090)
	pending := evil()
	running := evil()
	running.State, running.Reason, running.Detail, running.HostReasons = "RUN", "", "", nil
	running.Hosts = map[string]int{"h\x1b1": 2}
	for _, c := range []struct {
		what  string
		print func(w *bytes.Buffer) error
		lines []string // each must be a whole line of the output
		count int      // the output's lines
	}{
		{"jobs", func(w *bytes.Buffer) error { return writeJobs(w, []api.JobInfo{pending}) }, nil, 2},
		{"jobs -l", func(w *bytes.Buffer) error { return writeJobsLong(w, []api.JobInfo{pending}) }, []string{
			"Job <7>, Job Name <" + name + ">, User <alice>, Queue <normal>, Status <PEND>",
			`  Command <echo a\nb>`,
			`  Tasks 1, Requirement <select[mem>1]>, Output </tmp/\x1b]0;t\x07>`,
			`  PENDING REASON: Dependency: done("a\u202eb")`,
			`    not enough\tslots: 2 hosts`,
		}, 6},
		{"jobs -l, running", func(w *bytes.Buffer) error { return writeJobsLong(w, []api.JobInfo{running}) }, []string{
			`  Hosts <2*h\x1b1>, pid 0`,
		}, 5},
		{"jobs -p", func(w *bytes.Buffer) error { return writePending(w, []api.JobInfo{pending}) }, []string{
			`Job <7>, user <alice>, queue <normal>: PENDING REASON: Dependency: done("a\u202eb")`,
			`    not enough\tslots: 2 hosts`,
		}, 2},
		{"history", func(w *bytes.Buffer) error {
			return writeHistory(w, api.HistoryReply{ID: 7, Events: []api.HistoryEvent{{Time: 0, What: "submitted by alice to queue q\x1b[1m, 1-1 tasks"}}}, time.UTC)
		}, []string{
			"Job <7>:",
			`Thu Jan  1 00:00:00.000: submitted by alice to queue q\x1b[1m, 1-1 tasks`,
		}, 2},
		{"hosts", func(w *bytes.Buffer) error {
			return writeHosts(w, []api.HostInfo{{Name: "h\n1", Status: "ok", Slots: 4, Used: 1}})
		}, []string{"HOST_NAME  STATUS  MAX  RUN", `h\n1       ok      4    1`}, 2},
		{"queues", func(w *bytes.Buffer) error {
			return writeQueues(w, []api.QueueInfo{{Name: "q\x1b", Priority: 1, Policy: "fcfs", Status: "open"}})
		}, []string{"QUEUE_NAME  PRIO  STATUS  POLICY  PEND  RUN  SLOTS", `q\x1b       1     open    fcfs    0     0    0`}, 2},
		{"why", func(w *bytes.Buffer) error {
			rep := api.WhyReply{Now: start - 90, Job: pending, Suggestions: []sim.Suggestion{{Change: "-q \x1bq", What: "queue \x1bq", Start: start}}}
			rep.Job.ForecastStart = api.Forecast{Asked: true, Start: &start}
			rep.Job.ForecastHosts = map[string]int{"h\r1": 1}
			return writeWhy(w, rep, time.UTC)
		}, []string{
			`Job 7 is pending: Dependency: done("a\u202eb").`,
			`  2 hosts: not enough\tslots`,
			`Forecast: starts in 1m30s (Jan 15 08:01:30) on 1*h\r1.`,
			`  -q \x1bq  queue \x1bq: starts in 1m30s (Jan 15 08:01:30)`,
		}, 6},
	} {
		var b bytes.Buffer
		if err := c.print(&b); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		out := b.String()
		for i := 0; i < len(out); i++ {
			if ch := out[i]; ch < 0x20 && ch != '\n' || ch == 0x7f {
				t.Errorf("%s: byte %d of the output is %#x:\n%s", c.what, i, ch, out)
				break
			}
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(got) != c.count {
			t.Errorf("%s: %d lines, want %d:\n%s", c.what, len(got), c.count, out)
		}
		for _, want := range c.lines {
			found := false
			for _, l := range got {
				found = found || strings.TrimRight(l, " ") == want
			}
			if !found {
				t.Errorf("%s: no line %q in:\n%s", c.what, want, out)
			}
		}
		if c.what == "jobs" && !strings.Contains(out, name) {
			t.Errorf("jobs: the name is not shown as %s:\n%s", name, out)
		}
	}
}

// TestSubmitChecksEnvironment: xce submit checks the whole request with
// the server's rules (submit.CheckJobs) before it sends it: an
// environment over 1 MiB is bad input (exit 2) naming the entry, and no
// server is asked (XCE_SERVER names none).
func TestSubmitChecksEnvironment(t *testing.T) {
	t.Setenv("XCE_SERVER", filepath.Join(t.TempDir(), "no.sock"))
	t.Setenv("XCE_TEST_HUGE", strings.Repeat("x", 1<<20))
	code, out, errs := runXce("submit", "--", "true")
	if code != ExitUsage || out != "" || !regexp.MustCompile(`^xce: env\[\d+\]: the environment is larger than 1048576 bytes\n$`).MatchString(errs) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and the environment's error", code, out, errs)
	}
}

// TestSubmitRefusal: the server's refusal of one job of a submission reads
// as the CLI's own errors do.
func TestSubmitRefusal(t *testing.T) {
	for _, c := range []struct {
		field, msg string
		jobs       int
		want       string
	}{
		{"jobs[0]", `queue "nosuch" does not exist`, 1, `queue "nosuch" does not exist`},
		{"jobs[2]", `queue "nosuch" does not exist`, 3, `job 3: queue "nosuch" does not exist`},
		{"jobs[0].name", "longer than 4094 bytes", 1, "name: longer than 4094 bytes"},
		{"jobs[1].name", "longer than 4094 bytes", 2, "job 2: name: longer than 4094 bytes"},
		{"jobs", "no job", 1, "jobs: no job"},
	} {
		err := submitRefusal(&api.Error{Status: http.StatusBadRequest, Msg: c.msg, Field: c.field}, c.jobs)
		if err.Error() != c.want {
			t.Errorf("%s %q of %d jobs: %q, want %q", c.field, c.msg, c.jobs, err.Error(), c.want)
		}
	}
	if err := errors.New("plain"); submitRefusal(err, 2) != err {
		t.Error("an error that is not the server's changed")
	}
}
