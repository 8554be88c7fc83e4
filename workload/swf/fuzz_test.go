package swf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// refParse is a plain reference parser for one record line: split at
// blanks, then each field with parseInt or parseFloat. The fuzz target
// checks parseRecord's single-pass fast path against it.
func refParse(line []byte) (Job, *ParseError) {
	var fields [][]byte
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		s := i
		for i < len(line) && !isSpace(line[i]) {
			i++
		}
		if i > s {
			fields = append(fields, line[s:i])
		}
	}
	if len(fields) != NumFields {
		return Job{}, &ParseError{Msg: "expected 18 fields, got " + itoa(len(fields))}
	}
	var iv [NumFields]int64
	var fv [NumFields]float64
	for k, b := range fields {
		var kind int
		switch fieldKinds[k] {
		case 'I':
			iv[k], kind = parseInt(b, false)
		case 'T':
			iv[k], kind = parseInt(b, true)
		default:
			fv[k], kind = parseFloat(b)
		}
		if kind != valOK {
			return Job{}, &ParseError{Field: k + 1, Msg: valueMsg(kind, b)}
		}
	}
	return Job{iv[0], iv[1], iv[2], iv[3], iv[4], fv[5], fv[6], iv[7], iv[8], fv[9],
		iv[10], iv[11], iv[12], iv[13], iv[14], iv[15], iv[16], iv[17]}, nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// result is what Next gave for one record line.
type result struct {
	line int
	job  Job
	err  string
}

// refRecords returns what the reader should give for the record lines of
// data (after the header), by the reference parser.
func refRecords(data []byte) []result {
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var out []result
	for i, l := range lines {
		if i == 0 {
			l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		t := bytes.TrimLeft(l, " \t\r\v\f")
		if len(t) == 0 || t[0] == ';' {
			continue
		}
		j, pe := refParse(t)
		r := result{line: i + 1, job: j}
		if pe != nil {
			pe.File, pe.Line = "fuzz", i+1
			r = result{line: i + 1, err: pe.Error()}
		}
		out = append(out, r)
	}
	return out
}

// readResults reads data with r's settings, returning the header, its
// error, and what Next gave up to io.EOF.
func readResults(t *testing.T, r *Reader) (Header, error, []result) {
	h, herr := r.Header()
	var out []result
	for {
		j, err := r.Next()
		if err == io.EOF {
			break
		}
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("non-parse error from a bytes.Reader: %v", err)
		}
		if err != nil {
			if pe.Line < 1 || pe.Field < 0 || pe.Field > NumFields || pe.File != "fuzz" {
				t.Fatalf("bad ParseError %#v", pe)
			}
			out = append(out, result{line: pe.Line, err: pe.Error()})
			continue
		}
		out = append(out, result{line: r.Line(), job: j})
	}
	return h, herr, out
}

// FuzzReader checks that the reader never panics; that every record read
// matches the reference parser; that every Job and header read re-writes
// and re-reads to the same values; and that SkipBad skips exactly the lines
// that are errors otherwise.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"",
		good + "\n",
		"; Version: 2.2\n; MaxNodes: 100\n; MaxProcs: 100\n; UnixStartTime: 843480031\n;\n" +
			"    1        0 964980  97225   56     -1    -1   56 210000    -1  1   1   1  -1 -1 -1 -1 -1\n" +
			"    2   327952 291900   9382   80     -1    -1   80  14400    -1  1   2   2  -1 -1 -1 -1 -1\n",
		"1    5094 -1   12072  16 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\r\n",
		"; MaxNodes: abc\n" + good,
		"; MaxProcs: 12 (per node)\n\n" + good + "\n; MaxNodes: 3\n" + good,
		rec(4, "12.5") + "\n" + rec(6, "1e-7") + "\n" + rec(7, "3.25") + "\n" + rec(10, "1E+21"),
		rec(5, "1.5") + "\n" + rec(2, "-5") + "\n" + rec(1, "99999999999999999999") + "\n" + rec(7, "NaN"),
		rec(3, "-1.0") + "\n" + rec(3, "-0") + "\n" + rec(9, "9223372036854775807.5") + "\n" + rec(18, "+.5"),
		"\xef\xbb\xbf; x\n" + good + " 1\n1 2 3\n",
		"\t" + good + "\t\v\f",
		// Times at and beyond MaxTime (issue 11 §5).
		rec(2, "9223372036854775807") + "\n" + rec(4, "4611686018427387904") + "\n" + rec(9, "1000000000000001") + "\n" +
			rec(3, "1000000000000000") + "\n" + rec(18, "999999999999999.5") + "\n" + rec(2, "1000000000000000.5"),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		h, herr, got := readResults(t, r)

		// Records against the reference parser (no line here is too long
		// unless the input is).
		if len(data) <= MaxLineLength {
			if want := refRecords(data); !reflect.DeepEqual(got, want) {
				t.Fatalf("reader gave\n%+v\nreference gives\n%+v", got, want)
			}
		}

		// SkipBad skips the same lines.
		rs := NewReader(bytes.NewReader(data), "fuzz")
		rs.SkipBad(true)
		hs, hserr, gots := readResults(t, rs)
		if hserr != nil {
			t.Fatalf("Header under SkipBad: %v", hserr)
		}
		var jobs []result
		nerr := 0
		for _, g := range got {
			if g.err != "" {
				nerr++
			} else {
				jobs = append(jobs, g)
			}
		}
		for _, c := range h.Comments { // every bad header value counts
			if key, value, ok := commentKey(c); ok {
				if _, msg := headerValue(key, value); msg != "" {
					nerr++
				}
			}
		}
		if !reflect.DeepEqual(gots, jobs) || countErrs(gots) != 0 || rs.Skipped() != nerr {
			t.Fatalf("SkipBad: %d jobs, %d skipped; strict: %d jobs, %d errors", len(gots), rs.Skipped(), len(jobs), nerr)
		}
		if !reflect.DeepEqual(hs, h) {
			t.Fatalf("SkipBad header %+v, strict %+v", hs, h)
		}
		for i, e := range rs.SkippedErrors() {
			if i >= MaxSkippedErrors || e.Line < 1 || e.Error() == "" {
				t.Fatalf("skipped error %d: %#v", i, e)
			}
		}

		// Re-write and re-read.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if herr == nil {
			if err := w.WriteHeader(h); err != nil {
				t.Fatalf("WriteHeader(%+v): %v", h, err)
			}
		}
		for _, g := range jobs {
			if err := w.Write(g.job); err != nil {
				t.Fatalf("Write(%+v): %v", g.job, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r2 := NewReader(&buf, "fuzz")
		h2, herr2, got2 := readResults(t, r2)
		if herr2 != nil {
			t.Fatalf("re-read header: %v in\n%q", herr2, buf.String())
		}
		if herr == nil && !reflect.DeepEqual(h2, h) {
			t.Fatalf("header %+v re-read as %+v", h, h2)
		}
		if len(got2) != len(jobs) {
			t.Fatalf("%d jobs re-read, want %d", len(got2), len(jobs))
		}
		for i := range jobs {
			if got2[i].err != "" || got2[i].job != jobs[i].job {
				t.Fatalf("job %+v re-read as %+v (%s) from %q", jobs[i].job, got2[i].job, got2[i].err,
					strings.SplitN(buf.String(), "\n", len(jobs)+1)[i])
			}
		}
	})
}

func countErrs(rs []result) int {
	n := 0
	for _, r := range rs {
		if r.err != "" {
			n++
		}
	}
	return n
}

// FuzzParseInt checks parseInt against exact rational arithmetic.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "-1.0", "-0", "+7", "12.5", "12.49", ".5", "3.", "1e3", "-2",
		"-1.5", "9223372036854775807", "9223372036854775808", "9223372036854775807.5", "18446744073709551616",
		"abc", "", "-", ".", "1.2.3", "0x10", "00012.000",
		"1000000000000000", "1000000000000001", "999999999999999.5", "1000000000000000.5", "4611686018427387904"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	fixed := regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$`)
	maxInt := new(big.Rat).SetInt64(math.MaxInt64)
	maxTime := big.NewRat(1_000_000_000_000_000, 1) // 10^15, written out: not MaxTime
	f.Fuzz(func(t *testing.T, s string, isTime bool) {
		v, kind := parseInt([]byte(s), isTime)
		wantV, wantKind := int64(0), valOK
		if !fixed.MatchString(s) {
			wantKind = valNotNumber
			if validFloat([]byte(s)) {
				wantKind = valNotInteger
			}
		} else {
			r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
			if !ok {
				t.Fatalf("big.Rat cannot parse %q", s)
			}
			switch {
			case r.Sign() < 0 && r.Cmp(big.NewRat(-1, 1)) != 0:
				wantKind = valNegative
			case !isTime && !r.IsInt():
				wantKind = valNotInteger
			default:
				if isTime && !r.IsInt() { // round half up (r >= 0 here)
					r.Add(r, big.NewRat(1, 2))
					r.SetInt(new(big.Int).Quo(r.Num(), r.Denom()))
				}
				if isTime && r.Cmp(maxTime) > 0 {
					wantKind = valTimeRange
				} else if r.Cmp(maxInt) > 0 {
					wantKind = valRange
				} else {
					wantV = r.Num().Int64()
				}
			}
		}
		if v != wantV || kind != wantKind {
			t.Fatalf("parseInt(%q, %v) = %d, %d; want %d, %d", s, isTime, v, kind, wantV, wantKind)
		}
	})
}
