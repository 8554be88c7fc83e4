package submit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/internal/clip"
)

// Limits. Every input is bounded, so parsing takes bounded memory and
// time whatever it is given (docs/submit.md, Limits).
const (
	// MaxRequest bounds one job's command (the bytes of its words, plus
	// one per word) or its script, and one line of a pack file.
	MaxRequest = 1 << 20
	// MaxPackSize bounds a pack file, in bytes.
	MaxPackSize = 64 << 20
	// MaxPackLines bounds a pack file's lines, blank and comment lines
	// included.
	MaxPackLines = 100_000
	// MaxTasks is the largest task count -n accepts.
	MaxTasks = 10_000_000
	// MaxRunMinutes is the largest run limit -W accepts, in minutes
	// (about 694 days).
	MaxRunMinutes = 1_000_000
	// MaxResReq bounds one -R value and the requirement merged from
	// several, in bytes.
	MaxResReq = 4 << 10
	// MaxResReqCount bounds the number of -R options of one job.
	MaxResReqCount = 64
	// MaxJobName bounds -J, in bytes (LSF's limit for a job name).
	MaxJobName = 4094
	// MaxDepend bounds -w, in bytes.
	MaxDepend = 4094
	// MaxName bounds -q and -P, in bytes.
	MaxName = 255
	// MaxPath bounds -o and -e, and the working directory, in bytes.
	MaxPath = 4096
	// MaxJobs bounds the jobs of one submission: a pack file's, one API
	// request's (an array's elements are counted by CheckJobs, against
	// the larger of MaxJobs and the configuration's max_array_size).
	MaxJobs = 1000
	// MaxEstimate is the largest estimate (run limit) a job may have, in
	// seconds: -W's MaxRunMinutes.
	MaxEstimate = MaxRunMinutes * 60
	// MaxEnv bounds a job's environment: its entries' bytes plus one per
	// entry.
	MaxEnv = 1 << 20
	// MaxEnvVars bounds the entries of a job's environment.
	MaxEnvVars = 10_000
	// MaxParsed bounds, in bytes, the text of one submission that the
	// server parses in its loop: each job's -R, -w and -gpu, counted once
	// for every job it stands for (an array's elements each count: the
	// loop parses each element's again).
	MaxParsed = 256 << 10
	// MaxCompiled bounds, in bytes, the distinct requirements of one
	// submission that the server compiles against the cluster in its
	// loop: the -R and -gpu of each distinct (-R, -gpu, -n), counted
	// once (compiling a select[] costs more than parsing it).
	MaxCompiled = 64 << 10
)

// maxQuoted bounds, in characters, the input an error message repeats; a
// longer value is cut and followed by "...".
const maxQuoted = 40

// maxMsg bounds an Error's message, in bytes, whatever it quotes (a
// resreq message included).
const maxMsg = 300

// Error is a submission the user got wrong: a bad option or value, a bad
// script, a bad pack file line, a file that cannot be read. The CLI maps
// it to exit code 2. It says where the problem is:
//
//   - in the command line: Arg is the 1-based index of the argument in the
//     args given to Parse, Column the 1-based byte column within that
//     argument (0 when the whole argument is meant), Line is 0;
//   - in a script or a pack file: File names it ("standard input" for a
//     script read from there), Line is the 1-based line and Column the
//     1-based byte column within the line (0 when the whole line is meant);
//   - neither (a request as a whole, such as a missing command): Arg and
//     Line are 0.
//
// Field names the option at fault ("-n", "-R", ...), or "command",
// "script", "pack" or "#BSUB"; it is empty for a word-splitting error.
// Msg quotes at most 40 characters of the bad input and is at most 300
// bytes long. Err is the
// underlying error, if any: a *resreq.Error (whose Col is relative to the
// -R value; Column is relative to the line) or an I/O error.
type Error struct {
	File   string
	Line   int
	Arg    int
	Column int
	Field  string
	Msg    string
	Err    error
}

// Error returns the position, the field and the message:
// "job.sh:3:10: -W: ...", "argument 4, col 7: -R: ...", "-n: ...".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Line > 0:
		if e.File != "" {
			b.WriteString(e.File)
			b.WriteByte(':')
		} else {
			b.WriteString("line ")
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
		b.WriteString(": ")
	case e.Arg > 0:
		fmt.Fprintf(&b, "argument %d", e.Arg)
		if e.Column > 0 {
			fmt.Fprintf(&b, ", col %d", e.Column)
		}
		b.WriteString(": ")
	case e.Column > 0:
		fmt.Fprintf(&b, "col %d: ", e.Column)
	case e.File != "":
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// clipText returns s cut to maxQuoted characters, followed by "..." if cut.
func clipText(s string) string { return clip.Text(s, maxQuoted) }

// quote returns s quoted as by %q, cut to maxQuoted characters first
// (then followed by "..." after the closing quote).
func quote(s string) string { return clip.Quote(s, maxQuoted) }

// clipMsg cuts a message to at most maxMsg bytes (at a character
// boundary), followed by "..." if cut.
func clipMsg(s string) string { return clip.Msg(s, maxMsg) }
