package submit

import (
	"errors"
	"strings"
	"testing"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/jobarray"
)

// job is a request that passes Check, changed by edit.
func job(edit func(s *event.Submit)) event.Submit {
	s := event.Submit{TasksMin: 1, TasksMax: 1, Command: []string{"p"}, Cwd: "/"}
	if edit != nil {
		edit(&s)
	}
	return s
}

// TestCheck: each field's rule, the limits of docs/submit.md §7 and
// docs/api.md, with the field, the byte and the message worked out by
// hand ("" field and -1 byte: the job or the value as a whole; no
// message: accepted).
func TestCheck(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	env := func(n int) []string {
		e := make([]string, n)
		for i := range e {
			e[i] = "A=1"
		}
		return e
	}
	for _, c := range []struct {
		what  string
		edit  func(s *event.Submit)
		field string
		at    int
		msg   string
	}{
		{"ok", nil, "", 0, ""},
		{"no command, no script", func(s *event.Submit) { s.Command = nil }, "", -1, "give either a command or a script"},
		{"command and script", func(s *event.Submit) { s.Script = "p\n" }, "", -1, "give either a command or a script"},
		{"script alone", func(s *event.Submit) { s.Command, s.Script = nil, "p\n" }, "", 0, ""},
		{"name with ESC", func(s *event.Submit) { s.Name = "a\x1b[2J" }, "name", 1, "control or unprintable character U+001B"},
		{"name with a newline", func(s *event.Submit) { s.Name = "ab\nc" }, "name", 2, "control or unprintable character U+000A"},
		{"name of 4094 bytes", func(s *event.Submit) { s.Name = long(4094) }, "", 0, ""},
		{"name of 1 MB", func(s *event.Submit) { s.Name = long(1 << 20) }, "name", -1, "longer than 4094 bytes"},
		{"name with an index list", func(s *event.Submit) { s.Name = "a[1-3]" }, "name", 1, "'[' in a job name: an array's index list and cap go in array"},
		{"array", func(s *event.Submit) { s.Name, s.Array = "a", "1-10:2%3" }, "", 0, ""},
		{"name and array of 4095 bytes", func(s *event.Submit) { s.Name, s.Array = long(4090), "1-3" }, "array", -1, "the name and the array (-J name[array]) are longer than 4094 bytes"},
		{"queue with a space", func(s *event.Submit) { s.Queue = "my q" }, "queue", 2, `a name may not hold white space: "my q"`},
		{"queue of 256 bytes", func(s *event.Submit) { s.Queue = long(256) }, "queue", -1, "longer than 255 bytes"},
		{"project with ESC", func(s *event.Submit) { s.Project = "p\x1b" }, "project", 1, "control or unprintable character U+001B"},
		{"no task", func(s *event.Submit) { s.TasksMin = 0 }, "tasks_min", -1, "a task count must be at least 1, got 0"},
		{"10^7 tasks", func(s *event.Submit) { s.TasksMin, s.TasksMax = 10_000_000, 10_000_000 }, "", 0, ""},
		{"10^9 tasks", func(s *event.Submit) { s.TasksMax = 1_000_000_000 }, "tasks_min", -1, "a task count must be at most 10000000, got 1000000000"},
		{"max below min", func(s *event.Submit) { s.TasksMin, s.TasksMax = 5, 3 }, "tasks_min", -1, "max 3 is less than min 5"},
		{"negative estimate", func(s *event.Submit) { s.Estimate = -1 }, "estimate", -1, "a negative run limit, -1 s"},
		{"estimate of 10^6 minutes", func(s *event.Submit) { s.Estimate = 60_000_000 }, "", 0, ""},
		{"estimate of 2^62 s", func(s *event.Submit) { s.Estimate = 1 << 62 }, "estimate", -1, "a run limit must be at most 60000000 s (-W 1000000 minutes), got 4611686018427387904"},
		{"resreq of 4097 bytes", func(s *event.Submit) { s.ResReq = "select[" + long(4089) + "]" }, "resreq", -1, "longer than 4096 bytes"},
		{"resreq with NUL", func(s *event.Submit) { s.ResReq = "select[a\x00]" }, "resreq", 8, "NUL byte"},
		{"compound and tasks", func(s *event.Submit) { s.ResReq = "2*{select[a]} + 3*{select[b]}" }, "tasks_min", -1, "1 tasks, but the compound -R's terms ask for 5"},
		{"compound and its tasks", func(s *event.Submit) { s.ResReq, s.TasksMin, s.TasksMax = "2*{select[a]} + 3*{select[b]}", 5, 5 }, "", 0, ""},
		{"depend with a newline", func(s *event.Submit) { s.Depend = "done(1)\n" }, "depend", 7, "control or unprintable character U+000A"},
		{"depend of 4095 bytes", func(s *event.Submit) { s.Depend = long(4095) }, "depend", -1, "longer than 4094 bytes"},
		{"gpu of 1025 bytes", func(s *event.Submit) { s.GPU = long(1025) }, "gpu", -1, "longer than 1024 bytes"},
		{"command with NUL", func(s *event.Submit) { s.Command = []string{"p", "a\x00"} }, "command[1]", 1, "NUL byte"},
		{"command with a newline", func(s *event.Submit) { s.Command = []string{"echo", "a\nb"} }, "", 0, ""},
		{"command of MaxRequest + 1 bytes", func(s *event.Submit) { s.Command = []string{"p", long(MaxRequest - 2)} }, "command[0]", -1, "the command is longer than 1048576 bytes"},
		{"command of MaxRequest bytes", func(s *event.Submit) { s.Command = []string{"p", long(MaxRequest - 3)} }, "", 0, ""},
		{"empty command name", func(s *event.Submit) { s.Command = []string{""} }, "command[0]", -1, "the command name is empty"},
		{"script of 1 MiB + 1", func(s *event.Submit) { s.Command, s.Script = nil, long(MaxRequest+1) }, "script", -1, "the script is larger than 1048576 bytes"},
		{"script with NUL", func(s *event.Submit) { s.Command, s.Script = nil, "p\x00" }, "script", 1, "NUL byte"},
		{"relative cwd", func(s *event.Submit) { s.Cwd = "tmp" }, "cwd", -1, `the working directory must be an absolute path, got "tmp"`},
		{"cwd of 4097 bytes", func(s *event.Submit) { s.Cwd = "/" + long(4096) }, "cwd", -1, "longer than 4096 bytes"},
		{"cwd with a newline", func(s *event.Submit) { s.Cwd = "/a\nb" }, "", 0, ""},
		{"env entry without =", func(s *event.Submit) { s.Env = []string{"A=1", "PATH"} }, "env[1]", -1, `not NAME=value: "PATH"`},
		{"env of a shell function", func(s *event.Submit) { s.Env = []string{"BASH_FUNC_f%%=() {  echo\n}"} }, "", 0, ""},
		{"10^4 env entries", func(s *event.Submit) { s.Env = env(10_000) }, "", 0, ""},
		{"10^4 + 1 env entries", func(s *event.Submit) { s.Env = env(10_001) }, "env", -1, "10001 entries, more than 10000"},
		{"env over 1 MiB", func(s *event.Submit) { s.Env = []string{"A=1", "B=" + long(MaxEnv-6)} }, "env[1]", -1, "the environment is larger than 1048576 bytes"},
		{"env of 1 MiB", func(s *event.Submit) { s.Env = []string{"A=1", "B=" + long(MaxEnv-7)} }, "", 0, ""},
		{"env with NUL", func(s *event.Submit) { s.Env = []string{"A=\x00"} }, "env[0]", 2, "NUL byte"},
		{"stdout with ESC", func(s *event.Submit) { s.Stdout = "/tmp/\x1b]0;x\x07" }, "stdout", 5, "control or unprintable character U+001B"},
		{"stdout of 1 MB", func(s *event.Submit) { s.Stdout = long(1 << 20) }, "stdout", -1, "longer than 4096 bytes"},
		{"stderr with a tab", func(s *event.Submit) { s.Stderr = "e\tx" }, "stderr", 1, "control or unprintable character U+0009"},
	} {
		s := job(c.edit)
		err := Check(&s)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", c.what, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.At != c.at || fe.Msg != c.msg {
			t.Errorf("%s: %#v, want field %q, at %d, %q", c.what, err, c.field, c.at, c.msg)
		}
	}
}

// TestCheckParses: a resource requirement, a dependency, a GPU
// requirement and an array are parsed by their packages, whose errors
// Check names with their field and byte (0-based: the x of "select[mem>1
// x]", the end of "done(1) &&", the x of "num=x", the first index of an
// array too large) and wraps.
func TestCheckParses(t *testing.T) {
	for _, c := range []struct {
		what  string
		edit  func(s *event.Submit)
		field string
		at    int
		is    func(error) bool
	}{
		{"resreq", func(s *event.Submit) { s.ResReq = "select[mem>1 x]" }, "resreq", 13, nil},
		{"depend", func(s *event.Submit) { s.Depend = "done(1) &&" }, "depend", 10, nil},
		{"gpu", func(s *event.Submit) { s.GPU = "num=x" }, "gpu", 4, func(err error) bool { var e *gpureq.Error; return errors.As(err, &e) }},
		{"gpu and resreq", func(s *event.Submit) { s.GPU, s.ResReq = "num=1", "rusage[ngpus_physical=1]" }, "gpu", -1, nil},
		{"array", func(s *event.Submit) { s.Array = "1-1000001" }, "array", 0, func(err error) bool { var e *jobarray.Error; return errors.As(err, &e) }},
	} {
		s := job(c.edit)
		var fe *FieldError
		if err := Check(&s); !errors.As(err, &fe) || fe.Field != c.field || fe.At != c.at || fe.Err == nil || c.is != nil && !c.is(fe.Err) {
			t.Errorf("%s: %#v, want field %q at byte %d with the parser's error", c.what, err, c.field, c.at)
		}
	}
}

// TestCheckJobs: the number of requests and of jobs in all, an array's
// elements counted; the requirements' bytes, once per job (MaxParsed),
// and distinct (MaxCompiled); and the index of a bad request.
func TestCheckJobs(t *testing.T) {
	jobs := func(n int, edit func(s *event.Submit)) []event.Submit {
		js := make([]event.Submit, n)
		for i := range js {
			js[i] = job(edit)
		}
		return js
	}
	array := func(a string) func(s *event.Submit) { return func(s *event.Submit) { s.Array = a } }
	// req4K gives a job a requirement of 4096 bytes and 630 operands
	// (within resreq.MaxTerms): "select[a>1" (10), 313 times
	// "&&a>100000000" (4069), "&&a>100000000000" (16), "]".
	req4K := func(s *event.Submit) {
		s.ResReq = "select[a>1" + strings.Repeat("&&a>100000000", 313) + "&&a>100000000000]"
	}
	// tasks(n) is n jobs of that requirement, with 1 to n tasks: n
	// distinct requirements to compile.
	tasks := func(n int) []event.Submit {
		js := jobs(n, req4K)
		for i := range js {
			js[i].TasksMin, js[i].TasksMax = i+1, i+1
		}
		return js
	}
	for _, c := range []struct {
		what   string
		jobs   []event.Submit
		counts []int64
		job    int
		msg    string
	}{
		{"none", nil, nil, -1, "no job"},
		{"MaxJobs", jobs(1000, nil), nil, 0, ""},
		{"MaxJobs + 1", jobs(1001, nil), nil, -1, "1001 jobs, more than 1000 in one submission"},
		{"arrays of 1200 elements", jobs(2, array("1-600")), nil, -1, "1200 jobs in all (each element of an array counted), more than 1000 in one submission of several"},
		{"an array and a job: 1000 in all", append(jobs(1, array("1-999")), job(nil)), []int64{999, 1}, 0, ""},
		{"one array of 10^6", jobs(1, array("1-1000000")), []int64{1_000_000}, 0, ""},
		{"the second bad", append(jobs(1, nil), job(func(s *event.Submit) { s.Name = "\n" })), nil, 1, "control or unprintable character U+000A"},
		{"MaxParsed", jobs(64, req4K), nil, 0, ""},
		{"MaxParsed + 4 KiB", jobs(65, req4K), nil, 64, "the requirements (resreq, depend and gpu, once per job, an array's elements each counted) of the jobs up to this one total 266240 bytes, more than 262144 in one submission"},
		{"an array of MaxParsed", jobs(1, func(s *event.Submit) { req4K(s); s.Array = "1-64" }), []int64{64}, 0, ""},
		{"an array of MaxParsed + 4 KiB", jobs(1, func(s *event.Submit) { req4K(s); s.Array = "1-65" }), nil, 0, "the requirements (resreq, depend and gpu, once per job, an array's elements each counted) of the jobs up to this one total 266240 bytes, more than 262144 in one submission"},
		{"MaxCompiled", tasks(16), nil, 0, ""},
		{"MaxCompiled + 4 KiB", tasks(17), nil, 16, "the distinct requirements (resreq and gpu, for each task count) of the jobs up to this one total 69632 bytes, more than 65536 in one submission"},
	} {
		counts, err := CheckJobs(c.jobs)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.what, err)
			} else if c.counts != nil && !equal(counts, c.counts) || len(counts) != len(c.jobs) {
				t.Errorf("%s: counts %v, want %v", c.what, counts, c.counts)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Job != c.job || fe.Msg != c.msg {
			t.Errorf("%s: %#v, want job %d, %q", c.what, err, c.job, c.msg)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOneRule: `xce submit`'s options and the server's Check refuse the
// same values with the same message, at the same byte (the option's
// column is the byte + 1): they are one rule.
func TestOneRule(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		option, value string
		set           func(s *event.Submit, v string)
	}{
		{"-J", "a\x1b[2J", func(s *event.Submit, v string) { s.Name = v }},
		{"-J", "a\nb", func(s *event.Submit, v string) { s.Name = v }},
		{"-J", long(4095), func(s *event.Submit, v string) { s.Name = v }},
		{"-q", "a b", func(s *event.Submit, v string) { s.Queue = v }},
		{"-q", long(256), func(s *event.Submit, v string) { s.Queue = v }},
		{"-P", "p\x07", func(s *event.Submit, v string) { s.Project = v }},
		{"-o", long(4097), func(s *event.Submit, v string) { s.Stdout = v }},
		{"-e", "e\x1bx", func(s *event.Submit, v string) { s.Stderr = v }},
		{"-R", "select[" + long(4089) + "]", func(s *event.Submit, v string) { s.ResReq = v }},
		{"-R", "select[mem>1 x]", func(s *event.Submit, v string) { s.ResReq = v }},
		{"-w", "done(1) &&", func(s *event.Submit, v string) { s.Depend = v }},
		{"-w", "done(1)\x1b", func(s *event.Submit, v string) { s.Depend = v }},
		{"-gpu", "num=x", func(s *event.Submit, v string) { s.GPU = v }},
	} {
		_, perr := Parse([]string{c.option, c.value, "--", "p"}, Input{})
		var pe *Error
		if !errors.As(perr, &pe) {
			t.Errorf("%s %q: %v, want an *Error", c.option, c.value, perr)
			continue
		}
		s := job(nil)
		c.set(&s, c.value)
		var fe *FieldError
		if err := Check(&s); !errors.As(err, &fe) || fe.Msg != pe.Msg || fe.At+1 != pe.Column {
			t.Errorf("%s %q: the option says col %d %q, Check %v", c.option, c.value, pe.Column, pe.Msg, err)
		}
	}
}
