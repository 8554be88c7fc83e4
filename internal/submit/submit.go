// Package submit turns what a user gives `xce submit` (LSF's bsub) into
// validated job requests: the command line's options, then a command
// after "--", or a job script's path, or a job script on standard input;
// the #BSUB lines of a script; or a pack file of one job per line. It
// does no network or server work; reading a file or standard input goes
// through the caller's Input. The options, their LSF equivalents, the
// quoting rules and the limits are in docs/submit.md.
package submit

import (
	"fmt"
	"io"
	"slices"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/internal/event"
	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/resreq"
)

// Request is one job as submitted, validated: every field but Command,
// Script and Warnings maps to an option. Exactly one of Command and
// Script is set.
type Request struct {
	Name   string // -J, verbatim (a job array's [...] and %limit included)
	Depend string // -w, as written
	// Exclusive: -x, the job runs alone on its hosts.
	Exclusive bool
	// GPU is -gpu as written (LSF's syntax, checked; docs/gpus.md), ""
	// for none.
	GPU     string
	Queue   string // -q; "" for the default queue
	Project string // -P
	// TasksMin and TasksMax: -n min[,max]; without -n, the total of a
	// compound -R, else 1.
	TasksMin, TasksMax int
	// ResReq is -R as written, or the canonical merge of several -R
	// (docs/submit.md); Req is its parse (never nil; the empty
	// requirement when ResReq is "").
	ResReq string
	Req    *resreq.Requirement
	// Estimate is the run limit -W in seconds; 0 when not given.
	Estimate int64
	Stdout   string // -o, %J and %I unexpanded
	Stderr   string // -e
	// Rerunnable: -r (-rn sets it false again).
	Rerunnable bool
	// Command is the command and its arguments (after "--", or in a pack
	// file line).
	Command []string
	// Script is the job script, whole, as read (#BSUB lines included).
	Script string
	// Warnings are notes for the user that do not stop the submission
	// (a #BSUB line after the script's first command, not read).
	Warnings []string
}

// Submit returns the request as the event the server stores, without
// what the caller fills in: Job, User, UID, GID, Cwd and Env. Queue is
// "" when -q was not given: the caller puts the default queue there.
//
// A -J of the form name[index_list]%cap is a job array: Name is then the
// name part and Array the index list and cap (docs/arrays.md).
func (r *Request) Submit() event.Submit {
	name, array := r.Name, ""
	if a, isArray, err := jobarray.ParseName(r.Name, jobarray.MaxSize); err == nil && isArray {
		name, array = a.Name, a.Text
	}
	return event.Submit{
		Exclusive:  r.Exclusive,
		GPU:        r.GPU,
		Depend:     r.Depend,
		Array:      array,
		Name:       name,
		Queue:      r.Queue,
		Project:    r.Project,
		TasksMin:   r.TasksMin,
		TasksMax:   r.TasksMax,
		ResReq:     r.ResReq,
		Estimate:   r.Estimate,
		Command:    slices.Clone(r.Command),
		Script:     r.Script,
		Stdout:     r.Stdout,
		Stderr:     r.Stderr,
		Rerunnable: r.Rerunnable,
	}
}

// Input is what Parse may read besides the arguments.
type Input struct {
	// Stdin holds the job script when the arguments give neither a
	// command nor a script path; nil when there is no standard input to
	// read (that case is then an error).
	Stdin io.Reader
	// Open opens a script or pack file named in the arguments; nil when
	// files may not be read (naming one is then an error).
	Open func(name string) (io.ReadCloser, error)
	// CallerFlags are flags without a value that the caller handles
	// itself ("--json", "-h"): accepted anywhere among the options of the
	// command line (not after "--" or a script path, not in #BSUB or pack
	// lines), checked before xce's own options, and reported in
	// Submission.Flags.
	CallerFlags []string
}

// Submission is what Parse returns: one job, or the jobs of a pack file.
type Submission struct {
	// Jobs are the requests: one, or a pack file's in line order.
	Jobs []*Request
	// Pack is the pack file's name when -pack was given.
	Pack string
	// Flags are the CallerFlags given, in order.
	Flags []string
}

// stdinName names standard input in errors and warnings.
const stdinName = "standard input"

// Parse parses the arguments of `xce submit` (without the command name):
//
//	[options] -- command [argument...]   a command
//	[options] script                     a job script file, with #BSUB lines
//	[options]                            a job script on in.Stdin
//	-pack file                           a pack file: one job per line
//
// An option's value is always the next argument. Options of the command
// line win over the script's #BSUB lines, option by option; several -R
// are merged (docs/submit.md). Every error is an *Error; nothing is
// returned with one: for a pack file, one bad line rejects the file.
func Parse(args []string, in Input) (*Submission, error) {
	ws := make([]word, len(args))
	for i, a := range args {
		ws[i] = word{val: a, raw: a, arg: i + 1, col: 1}
	}
	var fa fields
	sub := &Submission{}
	next, dashdash, perr := parseOptions(ws, modeArgs, &fa, in.CallerFlags, &sub.Flags)
	if perr != nil {
		return nil, perr
	}
	if fa.set[optPack] {
		return parsePackArgs(in, sub, &fa, len(ws)-next, dashdash)
	}
	var r *Request
	var err error
	if dashdash {
		if next == len(ws) {
			return nil, ws[next-1].errAt(-1, "command", "\"--\" must be followed by the command")
		}
		r, err = finish(&fa, ws[next:], "")
	} else {
		var f *fields
		var text, warning string
		if f, text, warning, err = readScript(in, ws, next); err == nil {
			f.overlay(&fa)
			if r, err = finish(f, nil, text); err == nil && warning != "" {
				r.Warnings = []string{warning}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	sub.Jobs = []*Request{r}
	return sub, nil
}

// parsePackArgs reads the pack file that -pack names: -pack takes no
// other option (rest words after the options, or "--").
func parsePackArgs(in Input, sub *Submission, fa *fields, rest int, dashdash bool) (*Submission, error) {
	pw := fa.at[optPack]
	fa.set[optPack] = false
	if slices.Contains(fa.set[:], true) || rest > 0 || dashdash {
		return nil, pw.errAt(-1, "-pack", "takes no other option, script or command: each line of the file has its own")
	}
	data, err := readFile(in, pw, "-pack", MaxPackSize)
	if err != nil {
		return nil, err
	}
	sub.Pack = pw.val
	if sub.Jobs, err = ParsePack(pw.val, data); err != nil {
		return nil, err
	}
	return sub, nil
}

// readScript reads the job script, from the file ws[next] names or from
// standard input when there is no such word, and its #BSUB options.
func readScript(in Input, ws []word, next int) (*fields, string, string, error) {
	var data []byte
	name := stdinName
	var err error
	if next < len(ws) {
		pw := ws[next]
		if next+1 < len(ws) {
			return nil, "", "", ws[next+1].errAt(-1, "", "unexpected argument %s after the script %s: options go before the script, and a command goes after \"--\"",
				quote(ws[next+1].val), quote(pw.val))
		}
		if pw.val == "" {
			return nil, "", "", pw.errAt(-1, "script", "the script name is empty")
		}
		if data, err = readFile(in, pw, "script", MaxRequest); err != nil {
			return nil, "", "", err
		}
		name = pw.val
	} else {
		if in.Stdin == nil {
			return nil, "", "", &Error{Field: "command", Msg: "no command: give one after \"--\", or a script, or a script on standard input"}
		}
		var big bool
		switch data, big, err = readLimited(in.Stdin, MaxRequest); {
		case err != nil:
			return nil, "", "", &Error{File: stdinName, Field: "script", Msg: clipMsg(err.Error()), Err: err}
		case big:
			return nil, "", "", &Error{File: stdinName, Field: "script", Msg: fmt.Sprintf("the script is larger than %d bytes", MaxRequest)}
		}
	}
	f := &fields{}
	text := string(data)
	warning, serr := scanScript(text, name, f)
	if serr != nil {
		return nil, "", "", serr
	}
	return f, text, warning, nil
}

// readLimited reads r up to limit bytes; big reports that r holds more
// (reading stops one byte past the limit).
func readLimited(r io.Reader, limit int64) (data []byte, big bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, fmt.Errorf("read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}

// readFile reads the file word w names through in.Open, at most limit
// bytes.
func readFile(in Input, w word, field string, limit int64) ([]byte, error) {
	if in.Open == nil {
		return nil, w.errAt(-1, field, "cannot read %s: no files may be read here", quote(w.val))
	}
	rc, err := in.Open(w.val)
	if err != nil {
		e := w.errAt(-1, field, "cannot open %s: %v", quote(w.val), err)
		e.Err = err
		return nil, e
	}
	data, big, err := readLimited(rc, limit)
	cerr := rc.Close()
	switch {
	case big:
		return nil, w.errAt(-1, field, "%s is larger than %d bytes", quote(w.val), limit)
	case err == nil && cerr != nil:
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		e := w.errAt(-1, field, "cannot read %s: %v", quote(w.val), err)
		e.Err = err
		return nil, e
	}
	return data, nil
}

// finish checks a job's options and its command (words, or a script's
// text) as a whole and returns the request.
func finish(f *fields, cmd []word, script string) (*Request, error) {
	if cmd != nil {
		vals := make([]string, len(cmd))
		for k, w := range cmd {
			vals[k] = w.val
		}
		if k, p := commandProblem(vals); p != nil {
			return nil, cmd[k].report("command", p)
		}
	}
	var rw word
	if len(f.resreq) > 0 {
		rw = f.resreq[0].w
	}
	text, req, err := mergeResReq(f.resreq)
	if err != nil {
		return nil, err
	}
	for _, p := range f.resreq {
		if p.req == req {
			rw = p.w
		}
	}
	lo, hi, err := resolveTasks(f, req, rw)
	if err != nil {
		return nil, err
	}
	if f.gpu != "" {
		g, _ := gpureq.Parse(f.gpu) // checked by setValue
		if _, merr := gpureq.Merge(req, g); merr != nil {
			return nil, f.at[optGPU].errAt(-1, "-gpu", "%s", merr.Error())
		}
	}
	r := &Request{
		Name: f.name, Depend: f.depend, Exclusive: f.exclusive, GPU: f.gpu, Queue: f.queue, Project: f.project,
		TasksMin: lo, TasksMax: hi,
		ResReq: text, Req: req,
		Estimate: f.runMinutes * 60,
		Stdout:   f.stdout, Stderr: f.stderr,
		Rerunnable: f.rerun,
		Script:     script,
	}
	for _, w := range cmd {
		r.Command = append(r.Command, w.val)
	}
	return r, nil
}
