package submit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/xce-sched/xce/jobarray"
	"github.com/xce-sched/xce/resreq"
)

// opt identifies an option xce supports.
type opt uint8

const (
	optTasks     opt = iota // -n min[,max]
	optResReq               // -R res_req (may be repeated)
	optQueue                // -q queue
	optRunLimit             // -W [hours:]minutes
	optName                 // -J name
	optStdout               // -o file
	optStderr               // -e file
	optProject              // -P project
	optRerun                // -r, and -rn (not rerunnable)
	optPack                 // -pack file (command line only)
	optDepend               // -w 'dependency_expression'
	optExclusive            // -x
	optGPU                  // -gpu 'gpu_req'
	numOpts
)

// lookup returns the option a word names and whether it takes a value.
func lookup(name string) (o opt, value, ok bool) {
	switch name {
	case "-n":
		return optTasks, true, true
	case "-R":
		return optResReq, true, true
	case "-q":
		return optQueue, true, true
	case "-W":
		return optRunLimit, true, true
	case "-J":
		return optName, true, true
	case "-o":
		return optStdout, true, true
	case "-e":
		return optStderr, true, true
	case "-P":
		return optProject, true, true
	case "-r", "-rn":
		return optRerun, false, true
	case "-pack", "--pack":
		return optPack, true, true
	case "-w":
		return optDepend, true, true
	case "-x":
		return optExclusive, false, true
	case "-gpu":
		return optGPU, true, true
	}
	return 0, false, false
}

// lsfOnly reports whether name is an option of LSF 10.1's bsub that xce
// does not support (so the error can say so rather than "unknown").
func lsfOnly(name string) bool {
	switch name {
	case "-a", "-alloc_flags", "-app", "-ar", "-B", "-b", "-C", "-c", "-clusters",
		"-cn_cu", "-cn_mem", "-core_isolation", "-csm", "-cwd", "-D", "-data",
		"-datachk", "-datagrp", "-E", "-Ep", "-env", "-eo", "-eptl", "-ext",
		"-extsched", "-F", "-f", "-freq", "-G", "-g", "-H", "-hl",
		"-hostfile", "-I", "-Ip", "-IS", "-ISp", "-ISs", "-Is", "-IX", "-i",
		"-is", "-Jd", "-jsdl", "-jsdl_strict", "-jsm", "-K", "-k", "-L",
		"-ln_mem", "-ln_slots", "-Lp", "-M", "-m", "-mig", "-N", "-Ne",
		"-network", "-nnodes", "-notify", "-oo", "-outdir", "-p",
		"-ptl", "-Q", "-rcacct", "-rnc", "-S", "-s", "-sla", "-smt", "-sp",
		"-stage", "-step_cgroup", "-T", "-t", "-ti", "-tty", "-U", "-u",
		"-ul", "-v", "-We", "-wa", "-wt", "-XF", "-Zs", "-h",
		"-V", "-K0":
		return true
	}
	return false
}

// fields holds the options read from one source (the command line, a
// script's #BSUB lines, a pack file line). set says which were given; at
// is the word of the last value given (or of the flag, for -r).
type fields struct {
	set        [numOpts]bool
	at         [numOpts]word
	tasksMin   int
	tasksMax   int
	resreq     []reqPart // every -R, in order
	queue      string
	name       string
	project    string
	stdout     string
	stderr     string
	runMinutes int64
	rerun      bool
	pack       string
	depend     string
	exclusive  bool
	gpu        string
}

// reqPart is one -R value and its parse.
type reqPart struct {
	w   word
	req *resreq.Requirement
}

// overlay sets in f every option o gives: the command line wins over the
// script, option by option (all of -R at once).
func (f *fields) overlay(o *fields) {
	for i := range numOpts {
		if !o.set[i] {
			continue
		}
		f.set[i], f.at[i] = true, o.at[i]
		switch i {
		case optTasks:
			f.tasksMin, f.tasksMax = o.tasksMin, o.tasksMax
		case optResReq:
			f.resreq = o.resreq
		case optQueue:
			f.queue = o.queue
		case optRunLimit:
			f.runMinutes = o.runMinutes
		case optName:
			f.name = o.name
		case optStdout:
			f.stdout = o.stdout
		case optStderr:
			f.stderr = o.stderr
		case optProject:
			f.project = o.project
		case optRerun:
			f.rerun = o.rerun
		case optDepend:
			f.depend = o.depend
		case optExclusive:
			f.exclusive = o.exclusive
		case optGPU:
			f.gpu = o.gpu
		case optPack:
			f.pack = o.pack
		}
	}
}

// mode says where options are read from.
type mode uint8

const (
	modeArgs mode = iota // the command line
	modeBSUB             // a #BSUB line: options only
	modePack             // a pack file line: options, then the command
)

// parseOptions reads options from ws into f. It stops at "--" (skipped,
// dashdash true) or at the first word that is not an option, and returns
// that word's index (len(ws) when there is none). On the command line, a
// word of caller is a flag of the caller's, appended to flags.
func parseOptions(ws []word, m mode, f *fields, caller []string, flags *[]string) (next int, dashdash bool, err *Error) {
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		name := w.val
		if name == "--" {
			if m == modeBSUB {
				return 0, false, w.errAt(-1, "#BSUB", "a #BSUB line holds options only, not \"--\" or a command")
			}
			return i + 1, true, nil
		}
		if len(name) < 2 || name[0] != '-' {
			if m == modeBSUB {
				return 0, false, w.errAt(-1, "#BSUB", "a #BSUB line holds options only, not the word %s", quote(name))
			}
			return i, false, nil
		}
		if m == modeArgs && contains(caller, name) {
			*flags = append(*flags, name)
			continue
		}
		o, takes, ok := lookup(name)
		switch {
		case !ok && lsfOnly(name):
			return 0, false, w.errAt(-1, name, "LSF's bsub option %s is not supported by xce", name)
		case !ok:
			return 0, false, unknownOption(w)
		case o == optPack && m != modeArgs:
			return 0, false, w.errAt(-1, name, "only the command line may name a pack file")
		}
		if !takes {
			f.set[o], f.at[o] = true, w
			switch o {
			case optRerun:
				f.rerun = name == "-r"
			case optExclusive:
				f.exclusive = true
			}
			continue
		}
		if i+1 >= len(ws) {
			if w.arg > 0 {
				return 0, false, w.errAt(-1, name, "needs a value")
			}
			return 0, false, w.errAt(len(w.val), name, "needs a value")
		}
		i++
		if err := f.setValue(o, name, ws[i]); err != nil {
			return 0, false, err
		}
	}
	return len(ws), false, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unknownOption is the error for an option word xce does not know. A word
// that starts with a known value option ("-n4") gets a hint: the value is
// always the next word.
func unknownOption(w word) *Error {
	if o, takes, ok := lookup(w.val[:2]); ok && takes && o != optPack {
		return w.errAt(-1, "", "unknown option %s (an option's value is its own word: %s)",
			quote(w.val), clipText(Join([]string{w.val[:2], w.val[2:]})))
	}
	return w.errAt(-1, "", "unknown option %s", quote(w.val))
}

// setValue checks value word v of option o (written name) and records it.
func (f *fields) setValue(o opt, name string, v word) *Error {
	var err *Error
	switch o {
	case optTasks:
		f.tasksMin, f.tasksMax, err = parseTasks(v)
	case optResReq:
		var p reqPart
		if p, err = parseResReq(v); err == nil {
			if len(f.resreq) == MaxResReqCount {
				return v.errAt(-1, name, "more than %d -R options", MaxResReqCount)
			}
			f.resreq = append(f.resreq, p)
		}
	case optRunLimit:
		f.runMinutes, err = parseRunLimit(v)
	case optQueue:
		if err = checkName(v, name); err == nil {
			f.queue = v.val
		}
	case optProject:
		if err = checkName(v, name); err == nil {
			f.project = v.val
		}
	case optDepend:
		if err = v.check(name, dependProblem(v.val)); err == nil {
			f.depend = v.val
		}
	case optGPU:
		_, p := gpuProblem(v.val)
		if err = v.check(name, p); err == nil {
			f.gpu = v.val
		}
	case optName:
		// A job array's [index_list]%cap is checked here, with the column
		// of what is wrong (docs/arrays.md).
		if err = v.check(name, jobNameProblem(v.val, jobarray.MaxSize)); err == nil {
			f.name = v.val
		}
	case optStdout, optStderr:
		if err = checkText(v, name, MaxPath); err == nil {
			if o == optStdout {
				f.stdout = v.val
			} else {
				f.stderr = v.val
			}
		}
	case optPack:
		if v.val == "" {
			return v.errAt(-1, name, "the pack file name is empty")
		}
		f.pack = v.val
	}
	if err != nil {
		return err
	}
	f.set[o], f.at[o] = true, v
	return nil
}

// number reads the decimal digits of s from i, capping the value at
// limit+1. It returns the index past the digits.
func number(s string, i int, limit int64) (v int64, end int) {
	for end = i; end < len(s) && '0' <= s[end] && s[end] <= '9'; end++ {
		v = min(v*10+int64(s[end]-'0'), limit+1)
	}
	return v, end
}

// parseTasks reads -n min[,max]: whole numbers 1..MaxTasks, max >= min;
// min alone means min,min.
func parseTasks(w word) (lo, hi int, err *Error) {
	s := w.val
	var v [2]int64
	i := 0
	for k := range 2 {
		start := i
		v[k], i = number(s, i, MaxTasks)
		switch {
		case i == start:
			return 0, 0, w.errAt(i, "-n", "expected min[,max] task counts, whole numbers, in %s", quote(s))
		case v[k] > MaxTasks:
			return 0, 0, w.errAt(start, "-n", "a task count must be at most %d, got %s", MaxTasks, quote(s[start:i]))
		case v[k] < 1:
			return 0, 0, w.errAt(start, "-n", "a task count must be at least 1, got %s", quote(s[start:i]))
		case k == 1 && v[1] < v[0]:
			return 0, 0, w.errAt(start, "-n", "max %d is less than min %d", v[1], v[0])
		}
		if i == len(s) {
			if k == 0 {
				v[1] = v[0]
			}
			return int(v[0]), int(v[1]), nil
		}
		if k == 1 || s[i] != ',' {
			break
		}
		i++
	}
	return 0, 0, w.errAt(i, "-n", "expected min[,max] task counts, whole numbers, in %s", quote(s))
}

// parseRunLimit reads -W [hours:]minutes, at least one minute and at most
// MaxRunMinutes in all. LSF's /host_name and /host_model normalization is
// not supported.
func parseRunLimit(w word) (int64, *Error) {
	s := w.val
	bad := func(i int) (int64, *Error) {
		if i < len(s) && s[i] == '/' {
			return 0, w.errAt(i, "-W", "%s: normalizing the run limit to a host or model is not supported", quote(s[i:]))
		}
		return 0, w.errAt(i, "-W", "expected [hours:]minutes, whole numbers, in %s", quote(s))
	}
	a, i := number(s, 0, MaxRunMinutes)
	if i == 0 {
		return bad(i)
	}
	total := a
	if i < len(s) && s[i] == ':' {
		var m int64
		start := i + 1
		m, i = number(s, start, MaxRunMinutes)
		if i == start {
			return bad(i)
		}
		total = min(a*60+m, MaxRunMinutes+1)
	}
	switch {
	case i < len(s):
		return bad(i)
	case total > MaxRunMinutes:
		return 0, w.errAt(-1, "-W", "a run limit must be at most %d minutes, got %s", MaxRunMinutes, quote(s))
	case total < 1:
		return 0, w.errAt(-1, "-W", "a run limit must be at least 1 minute, got %s", quote(s))
	}
	return total, nil
}

// parseResReq parses one -R value (resreqProblem); a resreq error's
// column is mapped into the word's line (or argument).
func parseResReq(w word) (reqPart, *Error) {
	r, p := resreqProblem(w.val)
	if p != nil {
		return reqPart{}, w.report("-R", p)
	}
	return reqPart{w: w, req: r}, nil
}

// check is report for a value that must not be empty: an empty word is
// an error whatever p says.
func (w word) check(field string, p *problem) *Error {
	if w.val == "" {
		return w.errAt(-1, field, "must not be empty")
	}
	return w.report(field, p)
}

// report returns p, if any, as an error for field at its byte of the
// word's value (the whole word for p.at -1).
func (w word) report(field string, p *problem) *Error {
	if p == nil {
		return nil
	}
	e := w.errAt(p.at, field, "%s", p.msg)
	e.Err = p.err
	return e
}

// checkName checks a queue or project name: 1..MaxName bytes of
// printable characters, no white space (the scenario's rule for names;
// nameProblem).
func checkName(w word, field string) *Error { return w.check(field, nameProblem(w.val)) }

// checkText checks a file name: 1..limit bytes of valid UTF-8, printable
// characters and spaces only (textProblem).
func checkText(w word, field string, limit int) *Error {
	return w.check(field, textProblem(w.val, limit))
}

// firstInvalid returns the index of the first byte of s that is not
// valid UTF-8, or is a NUL byte, or (strict) starts a character that is
// neither printable nor a space.
func firstInvalid(s string, strict bool) (int, bool) {
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") || r == 0 || strict && !unicode.IsPrint(r) {
			return i, true
		}
	}
	return 0, false
}

// invalidMsg describes the bad byte or character at s[i].
func invalidMsg(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("invalid UTF-8 byte 0x%02x", s[i])
	case r == 0:
		return "NUL byte"
	}
	return fmt.Sprintf("control or unprintable character %U", r)
}
