package submit

import (
	"fmt"
	"strings"
)

// Word splitting: the quoting of #BSUB lines and pack file lines, a
// subset of the POSIX shell's (docs/submit.md, Quoting):
//
//   - words are separated by blanks: spaces and tabs; every other byte
//     (a carriage return, a newline, any non-ASCII character) is part of
//     a word;
//   - '...' quotes every byte up to the next single quote, literally;
//   - "..." quotes every byte up to the next unescaped double quote; in
//     it, a backslash followed by $, `, ", \ or a newline stands for that
//     character (a backslash-newline for nothing), and any other
//     backslash is literal;
//   - outside quotes, a backslash stands for the byte after it (a
//     backslash-newline for nothing); a backslash at the end is an error;
//   - a word that starts with an unquoted # starts a comment, which runs
//     to the end of the line;
//   - nothing is expanded: $NAME, `cmd`, $(cmd), ~, *, ? and [...] are
//     kept as written, and ;, |, &, <, > and parentheses are ordinary
//     characters.
//
// An unterminated quote is an error at the opening quote's column.

// word is one word of a command line, a #BSUB line or a pack line, with
// where it was written.
type word struct {
	val  string // the word, quotes removed
	raw  string // the word as written
	file string // the script or pack file ("" for an argument)
	line int    // 1-based line; 0 for an argument
	arg  int    // 1-based argument index; 0 for a word of a line
	col  int    // 1-based column of raw in its line (1 for an argument)
}

// column returns the 1-based column, in the word's line (or argument),
// of the byte that gives byte off of the word's value; off == len(val)
// gives the column just past the word.
func (w word) column(off int) int {
	if w.arg > 0 {
		return 1 + off
	}
	_, _, at, _ := scanWord(w.raw, 0, nil, off)
	if at < 0 {
		return w.col + len(w.raw)
	}
	return w.col + at
}

// errAt returns an error for field at byte off of the word's value; off
// < 0 means the whole word (column 0 for an argument, the word's first
// column in a line).
func (w word) errAt(off int, field, format string, args ...any) *Error {
	e := &Error{File: w.file, Line: w.line, Arg: w.arg, Field: field, Msg: clipMsg(fmt.Sprintf(format, args...))}
	switch {
	case off >= 0:
		e.Column = w.column(off)
	case w.arg == 0:
		e.Column = w.col
	}
	return e
}

// scanErr is a word-splitting error at byte index at of the line.
type scanErr struct {
	at  int
	msg string
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// scanWord scans the word that starts at s[i] (not a blank), appending
// its value to buf. It returns the index just past the word, the value,
// and, for want >= 0, the index in s of the byte that gives value byte
// want (-1 when the value is shorter).
func scanWord(s string, i int, buf []byte, want int) (end int, val []byte, at int, err *scanErr) {
	at = -1
	put := func(k int) {
		if len(buf) == want {
			at = k
		}
		buf = append(buf, s[k])
	}
	for i < len(s) && !isBlank(s[i]) {
		switch s[i] {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return i, buf, at, &scanErr{i, "unterminated single quote"}
			}
			for k := i + 1; k <= i+j; k++ {
				put(k)
			}
			i += j + 2
		case '"':
			open := i
			for i++; ; i++ {
				if i >= len(s) {
					return i, buf, at, &scanErr{open, "unterminated double quote"}
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] != '\n' {
						put(i)
					}
					continue
				}
				put(i)
			}
		case '\\':
			if i+1 >= len(s) {
				return i, buf, at, &scanErr{i, "backslash at end of line"}
			}
			if s[i+1] != '\n' {
				put(i + 1)
			}
			i += 2
		default:
			put(i)
			i++
		}
	}
	return i, buf, at, nil
}

// split splits s[start:] into words (see the rules above). Columns are
// 1-based byte columns of s. The words are given file and line.
func split(s string, start int, file string, line int) ([]word, *scanErr) {
	var words []word
	var buf []byte
	i := start
	for {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i >= len(s) || s[i] == '#' {
			return words, nil
		}
		end, val, _, err := scanWord(s, i, buf[:0], -1)
		if err != nil {
			return nil, err
		}
		buf = val
		words = append(words, word{val: string(val), raw: s[i:end], file: file, line: line, col: i + 1})
		i = end
	}
}

// Split splits one line into words the way #BSUB lines and pack file
// lines are split (docs/submit.md, Quoting): blanks separate words,
// single quotes, double quotes with backslash escapes and backslashes
// outside quotes quote, a word starting with an unquoted # starts a
// comment, and nothing is expanded. An unterminated quote or a trailing
// backslash is an *Error whose Column is the 1-based byte column of the
// quote or backslash.
func Split(line string) ([]string, error) {
	ws, err := split(line, 0, "", 0)
	if err != nil {
		return nil, &Error{Column: err.at + 1, Msg: err.msg}
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.val
	}
	return out, nil
}

// safeByte reports whether c needs no quoting anywhere in a word.
func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("_-+=:,./@%", c) >= 0
}

// Quote returns s written as one word that Split reads back as s: s
// itself when it is not empty and holds only letters, digits and
// _-+=:,./@%, else s in single quotes, a single quote in s being closed,
// escaped and reopened:
//
//	Quote("it's") == `'it'\''s'`
func Quote(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		safe = safeByte(s[i])
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join returns words quoted by Quote and separated by one space: Split
// of the result gives words back.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}
