package slurm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line, in bytes without its line ending, that
// the readers of Slurm files accept: a longer one is an error as soon as
// this much of it is read, so that a huge line costs bounded memory.
const MaxLine = 1 << 20

// Error is an error in a Slurm file: its name, the 1-based line and what
// is wrong. Error() is "file:line: message" (without the line when it is
// 0). Unwrap gives the underlying error, if any.
type Error struct {
	File string // the file's name
	Line int    // 1-based; 0 for the whole file
	Msg  string // what is wrong
	Err  error  // the underlying error, nil for none
}

// Error returns "file:line: msg".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at file:line with a formatted message; a %w
// verb's error becomes its Err.
func Errorf(file string, line int, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{File: file, Line: line, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Lines reads a text file line by line, each without its line ending
// ("\n" or "\r\n"), counting lines from 1; a UTF-8 byte order mark at the
// start is dropped. A line longer than MaxLine is an *Error, returned
// once its first MaxLine bytes are read.
type Lines struct {
	br   *bufio.Reader
	file string
	n    int
	buf  []byte
}

// NewLines returns a Lines reading r; file names it in errors.
func NewLines(r io.Reader, file string) *Lines {
	return &Lines{br: bufio.NewReaderSize(r, 64<<10), file: file}
}

// Line returns the number of the last line read.
func (l *Lines) Line() int { return l.n }

// Next returns the next line, valid until the following call, or io.EOF
// after the last one. An I/O error is returned wrapped with the file
// name.
func (l *Lines) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(chunk) > MaxLine+2 {
			l.n++
			return nil, Errorf(l.file, l.n, "line longer than %d bytes", MaxLine)
		}
		l.buf = append(l.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", l.file, err)
		}
		if len(l.buf) == 0 && err == io.EOF {
			return nil, io.EOF
		}
		l.n++
		line := bytes.TrimSuffix(bytes.TrimSuffix(l.buf, []byte("\n")), []byte("\r"))
		if l.n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > MaxLine {
			return nil, Errorf(l.file, l.n, "line longer than %d bytes", MaxLine)
		}
		return line, nil
	}
}
