package submit

import (
	"fmt"
	"strings"
)

// bsubPrefix starts an embedded option line.
const bsubPrefix = "#BSUB"

// scanScript reads the #BSUB lines of a job script into f
// (docs/submit.md, #BSUB). They are the lines whose first non-blank
// characters are "#BSUB" followed by a blank or the end of the line,
// before the script's first command line (a line that is neither blank
// nor a comment); their words, split as Split does, must all be options.
// A #BSUB line after the first command is not read: the first one is
// reported in the warning returned. The script must hold a command, and
// be valid UTF-8 without NUL bytes. file names the script in errors.
func scanScript(text, file string, f *fields) (warning string, err *Error) {
	if i, bad := firstInvalid(text, false); bad {
		line, col := lineCol(text, i)
		return "", &Error{File: file, Line: line, Column: col, Field: "script",
			Msg: invalidMsg(text, i) + "; a job script must be text"}
	}
	header, command := true, false
	late, firstLate := 0, 0
	for n, start := 1, 0; start < len(text); n++ {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := strings.TrimSuffix(text[start:end], "\r")
		start = end + 1
		t := strings.TrimLeft(line, " \t")
		switch {
		case t == "":
		case strings.HasPrefix(t, bsubPrefix) && (len(t) == len(bsubPrefix) || isBlank(t[len(bsubPrefix)])):
			if !header {
				if late++; late == 1 {
					firstLate = n
				}
				continue
			}
			ws, serr := split(line, len(line)-len(t)+len(bsubPrefix), file, n)
			if serr != nil {
				return "", &Error{File: file, Line: n, Column: serr.at + 1, Field: "#BSUB", Msg: serr.msg}
			}
			if _, _, err := parseOptions(ws, modeBSUB, f, nil, nil); err != nil {
				return "", err
			}
		case t[0] == '#':
		default:
			header, command = false, true
		}
	}
	if !command {
		return "", &Error{File: file, Field: "script", Msg: "the script holds no command, only blank lines, comments and #BSUB lines"}
	}
	if late > 0 {
		warning = fmt.Sprintf("%s:%d: #BSUB line after the script's first command not read (#BSUB lines must come before it)", file, firstLate)
		switch {
		case late == 2:
			warning += "; 1 more such line"
		case late > 2:
			warning += fmt.Sprintf("; %d more such lines", late-1)
		}
	}
	return warning, nil
}

// lineCol returns the 1-based line and byte column of byte i of text.
func lineCol(text string, i int) (line, col int) {
	before := text[:i]
	line = strings.Count(before, "\n") + 1
	return line, i - strings.LastIndexByte(before, '\n')
}
