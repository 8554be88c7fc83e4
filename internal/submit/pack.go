package submit

import (
	"fmt"
	"strings"
)

// ParsePack parses a pack file (LSF's bsub -pack job submission file;
// docs/submit.md, -pack): one job per line, written as the arguments of
// bsub without the word "bsub": options, then the command and its
// arguments ("--" may come before the command, and must when it starts
// with '-'). Lines are split as Split does, after one trailing carriage
// return is removed. Blank lines, and lines whose first non-blank
// character is '#', are skipped. file names the file in errors.
//
// All or nothing: the first bad line is an *Error naming file, line and
// column, and no request is returned. A file larger than MaxPackSize, of
// more than MaxPackLines lines, with a line longer than MaxRequest, of
// more than MaxJobs jobs, or without a job is an error too.
func ParsePack(file string, data []byte) ([]*Request, error) {
	if len(data) > MaxPackSize {
		return nil, &Error{File: file, Field: "pack", Msg: fmt.Sprintf("larger than %d bytes", MaxPackSize)}
	}
	text := string(data)
	var jobs []*Request
	for n, start := 1, 0; start < len(text); n++ {
		if n > MaxPackLines {
			return nil, &Error{File: file, Line: n, Field: "pack", Msg: fmt.Sprintf("more than %d lines", MaxPackLines)}
		}
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := strings.TrimSuffix(text[start:end], "\r")
		start = end + 1
		r, err := packLine(file, n, line)
		if err != nil {
			return nil, err
		}
		if r != nil {
			if len(jobs) == MaxJobs {
				return nil, &Error{File: file, Line: n, Field: "pack", Msg: fmt.Sprintf("more than %d jobs: one submission takes at most %d", MaxJobs, MaxJobs)}
			}
			jobs = append(jobs, r)
		}
	}
	if len(jobs) == 0 {
		return nil, &Error{File: file, Field: "pack", Msg: "no job: every line is blank or a comment"}
	}
	return jobs, nil
}

// packLine parses line n of a pack file: nil for a blank or comment line.
func packLine(file string, n int, line string) (*Request, error) {
	if len(line) > MaxRequest {
		return nil, &Error{File: file, Line: n, Field: "pack", Msg: fmt.Sprintf("line longer than %d bytes", MaxRequest)}
	}
	if i, bad := firstInvalid(line, false); bad {
		return nil, &Error{File: file, Line: n, Column: i + 1, Field: "pack", Msg: invalidMsg(line, i)}
	}
	t := strings.TrimLeft(line, " \t")
	if t == "" || t[0] == '#' {
		return nil, nil
	}
	ws, serr := split(line, 0, file, n)
	if serr != nil {
		return nil, &Error{File: file, Line: n, Column: serr.at + 1, Msg: serr.msg}
	}
	var f fields
	next, _, err := parseOptions(ws, modePack, &f, nil, nil)
	if err != nil {
		return nil, err
	}
	if next == len(ws) {
		return nil, &Error{File: file, Line: n, Column: len(line) + 1, Field: "command", Msg: "no command after the options"}
	}
	return finish(&f, ws[next:], "")
}
