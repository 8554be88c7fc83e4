package swf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/xce-sched/xce/workload/tracefile"
)

// MaxLineLength is the longest line, in bytes without the line ending, that
// a Reader accepts; a longer line is a ParseError (skipped under SkipBad).
const MaxLineLength = 1 << 20

// MaxSkippedErrors is how many of the skipped lines' errors a Reader keeps
// for SkippedErrors.
const MaxSkippedErrors = 10

// bufSize is the bufio buffer size; lines up to this length are parsed in
// place without copying.
const bufSize = 64 << 10

// Reader reads an SWF log: first the header comments (Header), then one
// Job per record line (Next). It is not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	name string

	line    int    // lines read so far
	recLine int    // line of the last record returned by Next
	long    []byte // buffer for lines longer than the bufio buffer
	err     error  // sticky: io.EOF or a wrapped I/O error
	atEOF   bool   // the underlying reader reported EOF after a final line
	// skipRest: the last line was reported too long before its end was
	// read; the next read discards the rest of it first.
	skipRest bool

	// The line that ended the header, not yet handed to Next: its bytes
	// (valid until the next read) or its error (a line too long).
	pending    []byte
	pendingErr *ParseError
	hasPending bool

	hdrDone  bool
	hdr      Header
	hdrErr   error
	hdrLines map[string]int // HeaderLine

	skipBad     bool
	skipped     int
	skippedErrs []*ParseError
}

// NewReader returns a Reader of the SWF text read from r; name is used in
// error messages (usually the file name). It does not decompress: use Open
// for files that may be gzipped.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), name: name}
}

// Open opens the SWF file at path for reading, decompressing it if it is
// gzipped (recognized by the gzip magic bytes, whatever the extension).
// Error messages name the file by path, as given. The caller must Close the
// returned Closer, which closes the decompressor and the file.
func Open(path string) (*Reader, io.Closer, error) {
	r, c, err := tracefile.Open(path, bufSize)
	if err != nil {
		return nil, nil, err
	}
	if br, ok := r.(*bufio.Reader); ok {
		return &Reader{br: br, name: path}, c, nil
	}
	return NewReader(r, path), c, nil
}

// SkipBad sets whether malformed lines are skipped (and counted, see
// Skipped) instead of returned as errors by Header and Next. I/O and
// decompression errors are never skipped.
func (r *Reader) SkipBad(on bool) { r.skipBad = on }

// Skipped returns how many malformed lines were skipped under SkipBad:
// records and over-long lines, and header comments whose MaxNodes,
// MaxProcs or UnixStartTime value is not a number (such a comment stays in
// Header.Comments, but its value is ignored).
func (r *Reader) Skipped() int { return r.skipped }

// SkippedErrors returns the errors of the first MaxSkippedErrors skipped
// lines, in file order.
func (r *Reader) SkippedErrors() []*ParseError { return slices.Clone(r.skippedErrs) }

// Line returns the line number of the record last returned by Next, or 0.
func (r *Reader) Line() int { return r.recLine }

// Header reads, if not done yet, the comment lines at the start of the log
// (blank lines among them are skipped) up to the first record, and returns
// what they say. Keys are "; Key: value" lines; MaxNodes, MaxProcs and
// UnixStartTime are interpreted (key case-insensitive, the value a leading
// integer with optional trailing text, the last occurrence winning, -1
// meaning unknown); all header lines are kept in Comments, each without
// its ';', one space after it, and trailing whitespace. Next calls
// Header implicitly. A malformed value is returned as a *ParseError on
// every call (the rest of the header is still read), unless SkipBad is on.
func (r *Reader) Header() (Header, error) {
	if !r.hdrDone {
		r.readHeader()
	}
	return r.hdr, r.hdrErr
}

// HeaderLine returns the line of the header comment whose value Header
// took for key ("MaxNodes", "MaxProcs" or "UnixStartTime": the last one
// given), or 0 when none gave it (or the header is not read yet).
func (r *Reader) HeaderLine(key string) int { return r.hdrLines[key] }

// readHeader scans the leading comment lines, stopping at the first other
// non-blank line, which becomes pending.
func (r *Reader) readHeader() {
	r.hdrDone = true
	r.hdr = Header{UnixStartTime: -1}
	for {
		line, err := r.readLine()
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				r.pendingErr, r.hasPending = pe, true
			} else if err != io.EOF {
				r.hdrErr = err
			}
			return
		}
		b := bytes.TrimLeft(line, " \t\r\v\f")
		if len(b) == 0 {
			continue
		}
		if b[0] != ';' {
			r.pending, r.hasPending = line, true
			return
		}
		c := comment(b)
		r.hdr.Comments = append(r.hdr.Comments, c)
		key, value, ok := commentKey(c)
		if !ok {
			continue
		}
		v, msg := headerValue(key, value)
		if msg != "" {
			pe := &ParseError{File: r.name, Line: r.line, Msg: msg}
			if r.skipBad {
				r.skip(pe)
			} else if r.hdrErr == nil {
				r.hdrErr = pe
			}
			continue
		}
		setHeaderValue(&r.hdr, key, v)
		if r.hdrLines == nil {
			r.hdrLines = map[string]int{}
		}
		r.hdrLines[key] = r.line
	}
}

// comment returns the text of a comment line b (which starts with ';'):
// without the ';', one space after it, and trailing whitespace.
func comment(b []byte) string {
	b = b[1:]
	if len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return string(bytes.TrimRight(b, " \t\r\v\f"))
}

// Next returns the next record. Comment and blank lines are skipped. At the
// end of the log it returns io.EOF. A malformed record is a *ParseError
// (unless SkipBad is on); reading can continue after it. If the header was
// not read yet, Next reads it first and returns its error, if any, once.
func (r *Reader) Next() (Job, error) {
	if !r.hdrDone {
		r.readHeader()
		if r.hdrErr != nil {
			return Job{}, r.hdrErr
		}
	}
	for {
		var line []byte
		var err error
		if r.hasPending {
			r.hasPending = false
			line = r.pending
			if r.pendingErr != nil {
				err = r.pendingErr
			}
			r.pending, r.pendingErr = nil, nil
		} else {
			line, err = r.readLine()
		}
		if err != nil {
			var pe *ParseError
			if r.skipBad && errors.As(err, &pe) {
				r.skip(pe)
				continue
			}
			return Job{}, err
		}
		k := 0
		for k < len(line) && isSpace(line[k]) {
			k++
		}
		if k == len(line) || line[k] == ';' {
			continue
		}
		j, pe := parseRecord(line[k:])
		if pe != nil {
			pe.File, pe.Line = r.name, r.line
			if r.skipBad {
				r.skip(pe)
				continue
			}
			return Job{}, pe
		}
		r.recLine = r.line
		return j, nil
	}
}

// skip counts a skipped line and keeps its error if there is room.
func (r *Reader) skip(pe *ParseError) {
	r.skipped++
	if len(r.skippedErrs) < MaxSkippedErrors {
		r.skippedErrs = append(r.skippedErrs, pe)
	}
}

// readLine returns the next line without its line ending; the slice is
// valid until the next call. It returns io.EOF at the end, a *ParseError
// for a line longer than MaxLineLength (the line is consumed), or a wrapped
// I/O error, which is sticky.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.atEOF {
		r.err = io.EOF
		return nil, io.EOF
	}
	if r.skipRest {
		r.skipRest = false
		if err := r.skipLine(); err != nil {
			return nil, err
		}
	}
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		b, err = r.readLong(b)
		if err != nil {
			return nil, err
		}
	} else if err == io.EOF {
		if len(b) == 0 {
			r.err = io.EOF
			return nil, io.EOF
		}
		r.atEOF = true
	} else if err != nil {
		return nil, r.ioError(err, r.line+1)
	}
	r.line++
	if r.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if len(b) > MaxLineLength {
		return nil, r.tooLong()
	}
	return b, nil
}

// readLong reads the rest of a line that does not fit the bufio buffer,
// first part given, into r.long. Once the line is known to be longer than
// MaxLineLength it returns a *ParseError at once, without reading the rest
// of the line (which may be huge: a decompressed bomb); the next readLine
// skips that rest first.
func (r *Reader) readLong(first []byte) ([]byte, error) {
	r.long = append(r.long[:0], first...)
	for {
		b, err := r.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, r.ioError(err, r.line+1)
		}
		if len(r.long)+len(b) > MaxLineLength+2 { // +2: room for "\r\n"
			r.line++
			r.long = r.long[:0]
			r.skipRest = err == bufio.ErrBufferFull
			r.atEOF = err == io.EOF
			return nil, r.tooLong()
		}
		r.long = append(r.long, b...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			r.atEOF = true
		}
		return r.long, nil
	}
}

// skipLine discards the rest of an over-long line, up to and including its
// line break. At the end of the input it makes io.EOF sticky.
func (r *Reader) skipLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			r.err = io.EOF
			return io.EOF
		default:
			return r.ioError(err, r.line)
		}
	}
}

func (r *Reader) tooLong() *ParseError {
	return &ParseError{File: r.name, Line: r.line,
		Msg: "line is longer than " + strconv.Itoa(MaxLineLength) + " bytes"}
}

// ioError makes err sticky, naming the file and line, the line being read.
func (r *Reader) ioError(err error, line int) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	loc := "line " + strconv.Itoa(line)
	if r.name != "" {
		loc = r.name + ":" + strconv.Itoa(line)
	}
	r.err = fmt.Errorf("%s: %w", loc, err)
	return r.err
}
