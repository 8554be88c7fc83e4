package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/internal/state"
)

// okJob is a job the rig's cluster takes.
func okJob() JobRequest {
	return JobRequest{TasksMin: 1, TasksMax: 1, Command: []string{"true"}, Cwd: "/"}
}

// attack is a request the server must refuse, with the field and message
// of its 400 (worked out from the limits docs/api.md lists).
type attack struct {
	what, field, msg string
	jobs             []JobRequest
}

// attacks are issue 29's requests, and one of each limit.
func attacks() []attack {
	long := func(n int) string { return strings.Repeat("a", n) }
	one := func(edit func(j *JobRequest)) []JobRequest {
		j := okJob()
		edit(&j)
		return []JobRequest{j}
	}
	many := func(n int, edit func(j *JobRequest)) []JobRequest {
		js := make([]JobRequest, n)
		for i := range js {
			js[i] = okJob()
			if edit != nil {
				edit(&js[i])
			}
		}
		return js
	}
	terms := func(n int, term, sep string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(sep)
			}
			fmt.Fprintf(&b, term, i)
		}
		return b.String()
	}
	// req4K is a requirement of 4096 bytes and 630 operands (within
	// resreq.MaxTerms): "select[a>1" (10), 313 times "&&a>100000000"
	// (4069), "&&a>100000000000" (16), "]".
	req4K := "select[a>1" + strings.Repeat("&&a>100000000", 313) + "&&a>100000000000]"
	tasks17 := many(17, func(j *JobRequest) { j.ResReq = req4K })
	for i := range tasks17 {
		tasks17[i].TasksMin, tasks17[i].TasksMax = i+1, i+1
	}
	env := make([]string, 10_001)
	for i := range env {
		env[i] = "A=1"
	}
	return []attack{
		{"a 1.8 MB resreq", "jobs[0].resreq", "longer than 4096 bytes", one(func(j *JobRequest) { j.ResReq = "select[" + terms(200_000, "m%d>1", "&&")[:1_800_000] + "]" })},
		{"a 450,000-term select", "jobs[0].resreq", "longer than 4096 bytes", one(func(j *JobRequest) { j.ResReq = "select[" + terms(450_000, "mem>%d", " && ") + "]" })},
		{"a 200,000-name rusage", "jobs[0].resreq", "longer than 4096 bytes", one(func(j *JobRequest) { j.ResReq = "rusage[" + terms(200_000, "r%d=1", ",") + "]" })},
		{"a resreq that does not parse", "jobs[0].resreq", "byte 14: expected ']' after select expression", one(func(j *JobRequest) { j.ResReq = "select[mem>1 x]" })},
		{"a name with a newline and ESC", "jobs[0].name", "byte 5: control or unprintable character U+000A", one(func(j *JobRequest) { j.Name = "fine\n\x1b[2J\x1b[1;1HJob <1> DONE" })},
		{"a name with OSC", "jobs[0].name", "byte 1: control or unprintable character U+001B", one(func(j *JobRequest) { j.Name = "\x1b]0;pwned\x07" })},
		{"a 1 MB name", "jobs[0].name", "longer than 4094 bytes", one(func(j *JobRequest) { j.Name = long(1 << 20) })},
		{"a 1 MB -o", "jobs[0].stdout", "longer than 4096 bytes", one(func(j *JobRequest) { j.Stdout = long(1 << 20) })},
		{"a -e with ESC", "jobs[0].stderr", "byte 6: control or unprintable character U+001B", one(func(j *JobRequest) { j.Stderr = "/tmp/\x1b[2J" })},
		{"10^9 tasks", "jobs[0].tasks_min", "a task count must be at most 10000000, got 1000000000", one(func(j *JobRequest) { j.TasksMin, j.TasksMax = 1_000_000_000, 1_000_000_000 })},
		{"an estimate of 2^62 s", "jobs[0].estimate", "a run limit must be at most 60000000 s (-W 1000000 minutes), got 4611686018427387904", one(func(j *JobRequest) { j.Estimate = 1 << 62 })},
		{"a queue with a newline", "jobs[0].queue", "byte 7: control or unprintable character U+000A", one(func(j *JobRequest) { j.Queue = "normal\n" })},
		{"a 1 MB project", "jobs[0].project", "longer than 255 bytes", one(func(j *JobRequest) { j.Project = long(1 << 20) })},
		{"a 1 MB cwd", "jobs[0].cwd", "longer than 4096 bytes", one(func(j *JobRequest) { j.Cwd = "/" + long(1<<20) })},
		{"10,001 env entries", "jobs[0].env", "10001 entries, more than 10000", one(func(j *JobRequest) { j.Env = env })},
		{"a 1.2 MB env", "jobs[1].env[1]", "the environment is larger than 1048576 bytes", append(many(1, nil), one(func(j *JobRequest) { j.Env = []string{"A=" + long(600_000), "B=" + long(600_000)} })...)},
		{"a 1.2 MB command", "jobs[0].command[0]", "the command is longer than 1048576 bytes", one(func(j *JobRequest) { j.Command = []string{long(600_000), long(600_000)} })},
		{"a 1 MiB + 1 script", "jobs[0].script", "the script is larger than 1048576 bytes", one(func(j *JobRequest) { j.Command, j.Script = nil, long(1<<20+1) })},
		{"a dependency with ESC", "jobs[0].depend", "byte 8: control or unprintable character U+001B", one(func(j *JobRequest) { j.Depend = "done(1)\x1b" })},
		{"a name holding an index list", "jobs[0].name", "byte 2: '[' in a job name: an array's index list and cap go in array", one(func(j *JobRequest) { j.Name = "a[1-1000000]" })},
		{"1,001 jobs", "jobs", "1001 jobs, more than 1000 in one submission", many(1001, nil)},
		{"arrays of 1,200 jobs in all", "jobs", "1200 jobs in all (each element of an array counted), more than 1000 in one submission of several", many(2, func(j *JobRequest) { j.Array = "1-600" })},
		{"65 requirements of 4 KiB", "jobs[64]", "the requirements (resreq, depend and gpu, once per job, an array's elements each counted) of the jobs up to this one total 266240 bytes, more than 262144 in one submission", many(65, func(j *JobRequest) { j.ResReq = req4K })},
		{"17 distinct requirements of 4 KiB", "jobs[16]", "the distinct requirements (resreq and gpu, for each task count) of the jobs up to this one total 69632 bytes, more than 65536 in one submission", tasks17},
		{"no job", "jobs", "no job", nil},
	}
}

// TestSubmitRefusedBeforeLoop (issue 29): every attack is refused with a
// 400 naming its field, before it enters the loop: it is answered while
// the loop is busy with another request (before the fix, the resreq
// ones reached the resreq compiler inside the loop, and the others were
// taken), and the state is left as it was. A job within the limits is
// then taken.
func TestSubmitRefusedBeforeLoop(t *testing.T) {
	r := newRig(t)
	busy, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		_, err := r.loop.Do(context.Background(), func(*state.State, int64) ([]event.Event, error) {
			close(busy)
			<-release
			return nil, nil
		})
		held <- err
	}()
	<-busy
	as := attacks()
	type answer struct {
		attack int
		code   int
		field  string
		msg    string
	}
	answers := make(chan answer, len(as))
	for i, a := range as {
		go func() {
			w := r.postJobs(t, a.jobs...)
			var e Error
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
				e.Msg = w.Body.String()
			}
			answers <- answer{i, w.Code, e.Field, e.Msg}
		}()
	}
	got := make([]*answer, len(as))
	guard := time.After(20 * time.Second) // a hang guard: answers come in milliseconds
collect:
	for range as {
		select {
		case a := <-answers:
			got[a.attack] = &a
		case <-guard:
			break collect
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, a := range as {
		switch g := got[i]; {
		case g == nil:
			t.Errorf("%s: not answered while the loop was busy", a.what)
		case g.code != http.StatusBadRequest || g.field != a.field || g.msg != a.msg:
			t.Errorf("%s: %d %s %q, want 400 %s %q", a.what, g.code, g.field, g.msg, a.field, a.msg)
		}
	}
	r.loop.View(func(k *live.Core) {
		if n := len(k.State.Jobs); n != 0 {
			t.Errorf("the refused requests made %d jobs", n)
		}
	})
	if w := r.postJobs(t, okJob()); w.Code != http.StatusOK || w.Body.String() != `{"ids":[1],"queues":["normal"]}`+"\n" {
		t.Errorf("a good job: %d %s", w.Code, w.Body.String())
	}
}
