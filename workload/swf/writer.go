package swf

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Writer writes an SWF log: header comments (WriteHeader), then one line
// per Job (Write). Output is buffered: call Flush at the end. What a Writer
// writes, a Reader reads back to the same Header values and Jobs.
type Writer struct {
	bw  *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriter(w), buf: make([]byte, 0, 256)}
}

// WriteHeader writes h as comment lines: each of h.Comments as "; " +
// comment (";" alone for an empty one; a comment containing line breaks
// becomes several lines). Then, for each of MaxNodes, MaxProcs and
// UnixStartTime that is given in h (> 0) but not declared by the comments,
// a "; Key: value" line. It is an error if a comment declares a different
// value than h for one of these keys (as the Reader would read it: the
// last declaration wins), or if a comment gives one of them a value the
// Reader rejects.
func (w *Writer) WriteHeader(h Header) error {
	declared, seen, err := scanComments(h.Comments)
	if err != nil {
		return err
	}
	keys := headerKeys()
	for i, key := range keys {
		want := getHeaderValue(&h, key)
		got := getHeaderValue(&declared, key)
		if seen[i] && want != got {
			return fmt.Errorf("swf: header %s is %d but Comments declare %d", key, want, got)
		}
	}
	for _, c := range h.Comments {
		for l := range strings.Lines(c) {
			w.writeComment(strings.TrimRight(l, "\r\n"))
		}
		if c == "" {
			w.writeComment("")
		}
	}
	for i, key := range keys {
		if v := getHeaderValue(&h, key); !seen[i] && headerSet(v) {
			w.writeComment(key + ": " + strconv.FormatInt(v, 10))
		}
	}
	return w.flushErr()
}

// scanComments reads the MaxNodes, MaxProcs and UnixStartTime values that
// comments declare, as the Reader does; seen tells which keys appear.
func scanComments(comments []string) (h Header, seen [3]bool, err error) {
	h.UnixStartTime = -1
	keys := headerKeys()
	for _, c := range comments {
		key, value, ok := commentKey(c)
		if !ok {
			continue
		}
		v, msg := headerValue(key, value)
		if msg != "" {
			return h, seen, fmt.Errorf("swf: header comment %q: %s", c, msg)
		}
		setHeaderValue(&h, key, v)
		for i := range keys {
			if keys[i] == key {
				seen[i] = true
			}
		}
	}
	return h, seen, nil
}

func (w *Writer) writeComment(c string) {
	if c == "" {
		w.bw.WriteString(";\n")
		return
	}
	w.bw.WriteString("; ")
	w.bw.WriteString(c)
	w.bw.WriteByte('\n')
}

// Write writes j as one line of 18 space-separated fields: integers as
// integers, fields 6, 7 and 10 in the shortest decimal form that reads
// back exactly (exponent notation only for very small or large values).
// It is an error if a field holds a value the Reader rejects: a negative
// value other than -1, a non-finite decimal, or a time above MaxTime.
func (w *Writer) Write(j Job) error {
	if err := checkJob(&j); err != nil {
		return err
	}
	b := w.buf[:0]
	b = strconv.AppendInt(b, j.ID, 10)
	for _, v := range [...]int64{j.Submit, j.Wait, j.Run, j.AllocProcs} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = appendFloat(append(b, ' '), j.AvgCPU)
	b = appendFloat(append(b, ' '), j.UsedMem)
	b = strconv.AppendInt(append(b, ' '), j.ReqProcs, 10)
	b = strconv.AppendInt(append(b, ' '), j.ReqTime, 10)
	b = appendFloat(append(b, ' '), j.ReqMem)
	for _, v := range [...]int64{j.Status, j.User, j.Group, j.Executable,
		j.Queue, j.Partition, j.PrecedingID, j.ThinkTime} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.bw.Write(b)
	return err
}

// appendFloat formats a decimal field: fixed notation unless the value is
// below 1e-6 or from 1e21 up (as encoding/json does); -0 is written as 0.
func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	a := math.Abs(f)
	if a < 1e-6 || a >= 1e21 {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// checkJob rejects a Job with a value the Reader would not read back.
func checkJob(j *Job) error {
	ints := [NumFields]int64{j.ID, j.Submit, j.Wait, j.Run, j.AllocProcs, 0, 0,
		j.ReqProcs, j.ReqTime, 0, j.Status, j.User, j.Group, j.Executable,
		j.Queue, j.Partition, j.PrecedingID, j.ThinkTime}
	floats := [NumFields]float64{5: j.AvgCPU, 6: j.UsedMem, 9: j.ReqMem}
	for k := range NumFields {
		var bad string
		switch {
		case fieldKinds[k] == 'F':
			f := floats[k]
			if math.IsNaN(f) || math.IsInf(f, 0) || (f < 0 && f != -1) {
				bad = strconv.FormatFloat(f, 'g', -1, 64)
			}
		case ints[k] < -1 || fieldKinds[k] == 'T' && ints[k] > MaxTime:
			bad = strconv.FormatInt(ints[k], 10)
		}
		if bad != "" {
			return fmt.Errorf("swf: job %d: field %d (%s): %s is not a valid value (negative values other than -1, non-finite decimals and times above 10^15 s are not read back)",
				j.ID, k+1, FieldNames[k], bad)
		}
	}
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// flushErr returns a pending write error without flushing.
func (w *Writer) flushErr() error {
	_, err := w.bw.Write(nil)
	return err
}
