package submit

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/xce-sched/xce/depend"
	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/resreq"
)

// This file holds the rules every job request must follow, whoever made
// it: `xce submit`'s options check their values with them (with the
// column of what is wrong), and CheckJobs, which both the CLI (before it
// sends a submission) and the server (before a request enters its loop,
// internal/api) call, checks a whole request with them. The limits are in
// error.go and docs/submit.md §7; docs/api.md lists them as the server
// enforces them.

// problem is what is wrong with a value: at is the byte offset in the
// value of what is wrong (-1: the value as a whole), msg says what, err is
// the underlying parse error, if any.
type problem struct {
	at  int
	msg string
	err error
}

func problemf(at int, format string, args ...any) *problem {
	return &problem{at: at, msg: clipMsg(fmt.Sprintf(format, args...))}
}

// textProblem checks a job name, a file name, a dependency or a GPU
// requirement: at most limit bytes of valid UTF-8, printable characters
// and spaces only (no tab, newline, escape or other control character, so
// that printing it cannot drive a terminal). "" passes.
func textProblem(s string, limit int) *problem {
	if len(s) > limit {
		return problemf(-1, "longer than %d bytes", limit)
	}
	if bad, ok := firstInvalid(s, true); ok {
		return problemf(bad, "%s", invalidMsg(s, bad))
	}
	return nil
}

// nameProblem checks a queue or project name: textProblem's rules within
// MaxName bytes, and no white space. "" passes.
func nameProblem(s string) *problem {
	if p := textProblem(s, MaxName); p != nil {
		return p
	}
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return problemf(i, "a name may not hold white space: %s", quote(s))
	}
	return nil
}

// rawProblem checks a value that may hold any character (a command's
// word, a script, an environment entry, a working directory): at most
// limit bytes of valid UTF-8 without a NUL byte.
func rawProblem(s string, limit int) *problem {
	if len(s) > limit {
		return problemf(-1, "longer than %d bytes", limit)
	}
	if bad, ok := firstInvalid(s, false); ok {
		return problemf(bad, "%s", invalidMsg(s, bad))
	}
	return nil
}

// tasksProblem checks a task count: 1 <= lo <= hi <= MaxTasks.
func tasksProblem(lo, hi int) *problem {
	switch {
	case lo < 1:
		return problemf(-1, "a task count must be at least 1, got %d", lo)
	case hi > MaxTasks:
		return problemf(-1, "a task count must be at most %d, got %d", MaxTasks, hi)
	case hi < lo:
		return problemf(-1, "max %d is less than min %d", hi, lo)
	}
	return nil
}

// estimateProblem checks an estimate in seconds: 0 (none) to MaxEstimate.
func estimateProblem(sec int64) *problem {
	switch {
	case sec < 0:
		return problemf(-1, "a negative run limit, %d s", sec)
	case sec > MaxEstimate:
		return problemf(-1, "a run limit must be at most %d s (-W %d minutes), got %d", MaxEstimate, MaxRunMinutes, sec)
	}
	return nil
}

// resreqProblem checks and parses a resource requirement: at most
// MaxResReq bytes (checked before anything is parsed) of valid UTF-8
// without NUL, which resreq.Parse takes.
func resreqProblem(s string) (*resreq.Requirement, *problem) {
	if p := rawProblem(s, MaxResReq); p != nil {
		return nil, p
	}
	r, err := resreq.Parse(s)
	if err != nil {
		p := &problem{at: -1, msg: clipMsg(err.Error()), err: err}
		var re *resreq.Error
		if errors.As(err, &re) {
			p.at, p.msg = re.Col-1, clipMsg(re.Msg)
		}
		return nil, p
	}
	return r, nil
}

// compoundProblem checks a task count against a compound requirement as
// the scheduler will (framework.Compile): every compound alternative
// needs a fixed count equal to the sum of its terms' counts, a last term
// without a count taking the rest, at least 1.
func compoundProblem(r *resreq.Requirement, lo, hi int) *problem {
	sums, open := compoundTasks(r)
	for i, s := range sums {
		switch {
		case lo != hi:
			return problemf(-1, "a compound -R needs a fixed task count, not %d,%d", lo, hi)
		case open[i] && s >= int64(hi):
			return problemf(-1, "the compound -R's terms take %d tasks, leaving none of %d for its last term", s, hi)
		case !open[i] && s != int64(hi):
			return problemf(-1, "%d tasks, but the compound -R's terms ask for %d", hi, s)
		}
	}
	return nil
}

// dependProblem checks a dependency expression: textProblem's rules
// within MaxDepend bytes, and depend.Parse takes it.
func dependProblem(s string) *problem {
	if p := textProblem(s, MaxDepend); p != nil {
		return p
	}
	if _, err := depend.Parse(s); err != nil {
		var de *depend.Error
		if errors.As(err, &de) {
			return &problem{at: de.Col - 1, msg: clipMsg(de.Msg), err: err}
		}
		return &problem{at: -1, msg: clipMsg(err.Error()), err: err}
	}
	return nil
}

// gpuProblem checks and parses a GPU requirement: textProblem's rules
// within gpureq.MaxLen bytes, and gpureq.Parse takes it.
func gpuProblem(s string) (gpureq.Request, *problem) {
	if p := textProblem(s, gpureq.MaxLen); p != nil {
		return gpureq.Request{}, p
	}
	g, err := gpureq.Parse(s)
	if err != nil {
		var ge *gpureq.Error
		if errors.As(err, &ge) {
			return g, &problem{at: ge.Col - 1, msg: clipMsg(ge.Msg), err: err}
		}
		return g, &problem{at: -1, msg: clipMsg(err.Error()), err: err}
	}
	return g, nil
}

// jobNameProblem checks -J as written ("name" or "name[index_list]%cap"):
// textProblem's rules within MaxJobName bytes, and jobarray.ParseName
// takes it with arrays of up to maxArray elements.
func jobNameProblem(s string, maxArray int) *problem {
	if p := textProblem(s, MaxJobName); p != nil {
		return p
	}
	if _, _, err := jobarray.ParseName(s, maxArray); err != nil {
		var ae *jobarray.Error
		if errors.As(err, &ae) {
			return &problem{at: ae.Col - 1, msg: clipMsg(ae.Msg), err: err}
		}
		return &problem{at: -1, msg: clipMsg(err.Error()), err: err}
	}
	return nil
}

// commandProblem checks a command: a first word that is not empty, at
// most MaxRequest bytes counting one more per word (so at most
// MaxRequest words), each word valid UTF-8 without NUL. It returns the
// index of the word at fault.
func commandProblem(words []string) (int, *problem) {
	size := 0
	for k, w := range words {
		size += len(w) + 1
		if size > MaxRequest {
			return 0, problemf(-1, "the command is longer than %d bytes", MaxRequest)
		}
		if p := rawProblem(w, MaxRequest); p != nil {
			return k, p
		}
	}
	if len(words) > 0 && words[0] == "" {
		return 0, problemf(-1, "the command name is empty")
	}
	return 0, nil
}

// FieldError is a job request refused for one of its fields.
type FieldError struct {
	// Job is the index of the job in its submission (0 for one job); -1
	// when the submission as a whole is refused (no job, too many).
	Job int
	// Field is the field's JSON name in event.Submit (and the API's
	// JobRequest), with the index of a list's entry: "resreq",
	// "env[3]", "command[0]"; "" for the job as a whole.
	Field string
	// At is the byte offset, in the field's value, of what is wrong; -1
	// when the value as a whole is meant.
	At int
	// Msg says what is wrong; it quotes at most 40 characters of the
	// value and is at most 300 bytes long.
	Msg string
	// Err is the underlying parse error, if any (a *resreq.Error,
	// *depend.Error, *gpureq.Error or *jobarray.Error).
	Err error
}

// Text returns the message with the position: "byte 4: ..." when At is
// not -1.
func (e *FieldError) Text() string {
	if e.At >= 0 {
		return fmt.Sprintf("byte %d: %s", e.At+1, e.Msg)
	}
	return e.Msg
}

// Error returns the field and Text: "env[3]: not NAME=value: ...".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Text()
	}
	return e.Field + ": " + e.Text()
}

// Unwrap returns the underlying parse error, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// CheckJobs returns how many jobs each request stands for (1, or its
// array's elements), or the first reason a submission of them is refused
// whatever the cluster holds, a *FieldError: no request, more than
// MaxJobs, several requests that stand for more than MaxJobs jobs in all
// (an array's elements counted; one request alone may be an array of up
// to jobarray.MaxSize elements, which the configuration's max_array_size
// bounds further), requirements that total more than MaxParsed bytes
// (once per job they stand for) or, distinct, more than MaxCompiled
// bytes, or a request Check refuses. Its time
// and memory are linear in the requests' size and their elements, each
// field parsed once.
func CheckJobs(jobs []event.Submit) ([]int64, error) {
	switch {
	case len(jobs) == 0:
		return nil, &FieldError{Job: -1, At: -1, Msg: "no job"}
	case len(jobs) > MaxJobs:
		return nil, &FieldError{Job: -1, At: -1, Msg: fmt.Sprintf("%d jobs, more than %d in one submission", len(jobs), MaxJobs)}
	}
	counts := make([]int64, len(jobs))
	var total, parsed, compiled int64
	type key struct {
		resreq, gpu string
		lo, hi      int
	}
	seen := map[key]bool{}
	for i := range jobs {
		s := &jobs[i]
		n, err := check(s)
		if err != nil {
			err.Job = i
			return nil, err
		}
		counts[i], total = n, total+n
		if parsed += n * int64(len(s.ResReq)+len(s.Depend)+len(s.GPU)); parsed > MaxParsed {
			return nil, &FieldError{Job: i, At: -1, Msg: fmt.Sprintf("the requirements (resreq, depend and gpu, once per job, an array's elements each counted) of the jobs up to this one total %d bytes, more than %d in one submission", parsed, MaxParsed)}
		}
		if k := (key{s.ResReq, s.GPU, s.TasksMin, s.TasksMax}); !seen[k] {
			seen[k] = true
			if compiled += int64(len(s.ResReq) + len(s.GPU)); compiled > MaxCompiled {
				return nil, &FieldError{Job: i, At: -1, Msg: fmt.Sprintf("the distinct requirements (resreq and gpu, for each task count) of the jobs up to this one total %d bytes, more than %d in one submission", compiled, MaxCompiled)}
			}
		}
	}
	if len(jobs) > 1 && total > MaxJobs {
		return nil, &FieldError{Job: -1, At: -1, Msg: fmt.Sprintf("%d jobs in all (each element of an array counted), more than %d in one submission of several", total, MaxJobs)}
	}
	return counts, nil
}

// Check returns why job s would be refused whatever the cluster holds,
// as a *FieldError, or nil; what the caller fills in (Job, User, UID, GID)
// and what only a cluster can tell (the queue exists, the resources
// exist, the jobs a dependency names exist, the array fits
// max_array_size) are not checked.
func Check(s *event.Submit) error {
	if _, err := check(s); err != nil {
		return err
	}
	return nil
}

// check is Check, returning how many jobs s stands for.
func check(s *event.Submit) (int64, *FieldError) {
	bad := func(field string, p *problem) *FieldError {
		return &FieldError{Field: field, At: p.at, Msg: p.msg, Err: p.err}
	}
	whole := func(field, format string, args ...any) *FieldError {
		return &FieldError{Field: field, At: -1, Msg: clipMsg(fmt.Sprintf(format, args...))}
	}
	if (len(s.Command) == 0) == (s.Script == "") {
		return 0, whole("", "give either a command or a script")
	}
	if p := textProblem(s.Name, MaxJobName); p != nil {
		return 0, bad("name", p)
	}
	if i := strings.IndexAny(s.Name, "[]%"); i >= 0 {
		return 0, bad("name", problemf(i, "%q in a job name: an array's index list and cap go in array", s.Name[i]))
	}
	n := int64(1)
	if s.Array != "" {
		if len(s.Name)+len(s.Array)+2 > MaxJobName {
			return 0, whole("array", "the name and the array (-J name[array]) are longer than %d bytes", MaxJobName)
		}
		if p := textProblem(s.Array, MaxJobName); p != nil {
			return 0, bad("array", p)
		}
		a, err := jobarray.Parse(s.Array, jobarray.MaxSize)
		if err != nil {
			fe := &FieldError{Field: "array", At: -1, Msg: clipMsg(err.Error()), Err: err}
			if ae := (*jobarray.Error)(nil); errors.As(err, &ae) {
				fe.At, fe.Msg = ae.Col-1, clipMsg(ae.Msg)
			}
			return 0, fe
		}
		n = int64(len(a.Indices))
	}
	if p := nameProblem(s.Queue); p != nil {
		return 0, bad("queue", p)
	}
	if p := nameProblem(s.Project); p != nil {
		return 0, bad("project", p)
	}
	if p := tasksProblem(s.TasksMin, s.TasksMax); p != nil {
		return 0, bad("tasks_min", p)
	}
	if p := estimateProblem(s.Estimate); p != nil {
		return 0, bad("estimate", p)
	}
	req, p := resreqProblem(s.ResReq)
	if p != nil {
		return 0, bad("resreq", p)
	}
	if p := compoundProblem(req, s.TasksMin, s.TasksMax); p != nil {
		return 0, bad("tasks_min", p)
	}
	if s.Depend != "" {
		if p := dependProblem(s.Depend); p != nil {
			return 0, bad("depend", p)
		}
	}
	if s.GPU != "" {
		g, p := gpuProblem(s.GPU)
		if p != nil {
			return 0, bad("gpu", p)
		}
		if _, err := gpureq.Merge(req, g); err != nil {
			return 0, &FieldError{Field: "gpu", At: -1, Msg: clipMsg(err.Error()), Err: err}
		}
	}
	if k, p := commandProblem(s.Command); p != nil {
		return 0, bad(fmt.Sprintf("command[%d]", k), p)
	}
	if len(s.Script) > MaxRequest {
		return 0, whole("script", "the script is larger than %d bytes", MaxRequest)
	}
	if p := rawProblem(s.Script, MaxRequest); p != nil {
		return 0, bad("script", p)
	}
	if !strings.HasPrefix(s.Cwd, "/") {
		return 0, whole("cwd", "the working directory must be an absolute path, got %s", quote(s.Cwd))
	}
	if p := rawProblem(s.Cwd, MaxPath); p != nil {
		return 0, bad("cwd", p)
	}
	if err := envProblem(s.Env); err != nil {
		return 0, err
	}
	for _, f := range []struct {
		field, v string
	}{{"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if p := textProblem(f.v, MaxPath); p != nil {
			return 0, bad(f.field, p)
		}
	}
	return n, nil
}

// envProblem checks an environment: at most MaxEnvVars entries of at most
// MaxEnv bytes in all (one more per entry), each NAME=value, valid UTF-8
// without NUL.
func envProblem(env []string) *FieldError {
	if len(env) > MaxEnvVars {
		return &FieldError{Field: "env", At: -1, Msg: fmt.Sprintf("%d entries, more than %d", len(env), MaxEnvVars)}
	}
	size := 0
	for k, e := range env {
		field := fmt.Sprintf("env[%d]", k)
		if size += len(e) + 1; size > MaxEnv {
			return &FieldError{Field: field, At: -1, Msg: fmt.Sprintf("the environment is larger than %d bytes", MaxEnv)}
		}
		if p := rawProblem(e, MaxEnv); p != nil {
			return &FieldError{Field: field, At: p.at, Msg: p.msg}
		}
		if !strings.Contains(e, "=") {
			return &FieldError{Field: field, At: -1, Msg: "not NAME=value: " + quote(e)}
		}
	}
	return nil
}
