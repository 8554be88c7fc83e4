package swf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// good is a valid record; goodJob is what it reads as.
const good = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1"

var goodJob = Job{ID: 1, Submit: 0, Wait: 10, Run: 100, AllocProcs: 4, AvgCPU: -1,
	UsedMem: -1, ReqProcs: 4, ReqTime: 200, ReqMem: -1, Status: 1, User: 1, Group: 1,
	Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}

// readAll reads the header and every job of text; it stops at the first
// error other than io.EOF.
func readAll(t *testing.T, r *Reader) (Header, []Job, error) {
	t.Helper()
	h, err := r.Header()
	if err != nil {
		return h, nil, err
	}
	var jobs []Job
	for {
		j, err := r.Next()
		if err == io.EOF {
			return h, jobs, nil
		}
		if err != nil {
			return h, jobs, err
		}
		jobs = append(jobs, j)
	}
}

func TestHeader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Header
	}{
		{"none", good + "\n", Header{UnixStartTime: -1}},
		{"empty file", "", Header{UnixStartTime: -1}},
		{"kth style",
			"; Version: 2.2\n; UnixStartTime: 843480031\n; MaxNodes: 100\n; MaxProcs: 100\n;\n" + good + "\n",
			Header{MaxNodes: 100, MaxProcs: 100, UnixStartTime: 843480031,
				Comments: []string{"Version: 2.2", "UnixStartTime: 843480031", "MaxNodes: 100", "MaxProcs: 100", ""}}},
		{"trailing text, odd spacing and case",
			";MaxNodes: 128 (16 per frame)\n;  maxprocs :  512 cores\n; UnixStartTime:\t749458803\t\n" + good,
			Header{MaxNodes: 128, MaxProcs: 512, UnixStartTime: 749458803,
				Comments: []string{"MaxNodes: 128 (16 per frame)", " maxprocs :  512 cores", "UnixStartTime:\t749458803"}}},
		{"-1 is unknown, last one wins",
			"; MaxNodes: 64\n; MaxNodes: -1\n; MaxProcs: 8\n; MaxProcs: 16\n; UnixStartTime: -1\n",
			Header{MaxNodes: 0, MaxProcs: 16, UnixStartTime: -1,
				Comments: []string{"MaxNodes: 64", "MaxNodes: -1", "MaxProcs: 8", "MaxProcs: 16", "UnixStartTime: -1"}}},
		{"blank lines, continuation lines, CRLF, leading blanks",
			"\r\n; Information: a\r\n;              b\r\n\r\n   ; MaxProcs: 4\r\n" + good + "\r\n",
			Header{MaxProcs: 4, UnixStartTime: -1,
				Comments: []string{"Information: a", "             b", "MaxProcs: 4"}}},
		{"keys after the first record are ignored",
			"; MaxNodes: 2\n" + good + "\n; MaxNodes: 99\n; MaxProcs: 7\n",
			Header{MaxNodes: 2, UnixStartTime: -1, Comments: []string{"MaxNodes: 2"}}},
		{"byte order mark", "\xef\xbb\xbf; MaxNodes: 3\n",
			Header{MaxNodes: 3, UnixStartTime: -1, Comments: []string{"MaxNodes: 3"}}},
		{"other keys and key-like text", "; MaxJobs: 10\n; Note: MaxNodes: 5\n; MaxNodesX: 6\n",
			Header{UnixStartTime: -1, Comments: []string{"MaxJobs: 10", "Note: MaxNodes: 5", "MaxNodesX: 6"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), "x.swf")
			got, err := r.Header()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Header() = %#v, want %#v", got, tt.want)
			}
			// Header is idempotent, and Next still sees every record.
			if again, _ := r.Header(); !reflect.DeepEqual(again, got) {
				t.Errorf("second Header() = %#v", again)
			}
			_, jobs, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Count(tt.in, good); len(jobs) != want {
				t.Errorf("read %d jobs, want %d", len(jobs), want)
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"; MaxNodes: abc\n", `x.swf:1: MaxNodes: "abc" is not a number`},
		{"; x\n; MaxProcs:\n", `x.swf:2: MaxProcs: missing value`},
		{"; MaxProcs: 12.5 procs\n", `x.swf:1: MaxProcs: "12.5" is not an integer`},
		{"; UnixStartTime: -5\n", `x.swf:1: UnixStartTime: "-5" is negative (the only negative value allowed is -1, unknown)`},
		{"; UnixStartTime: 99999999999999999999\n", `x.swf:1: UnixStartTime: "99999999999999999999" is out of range`},
	}
	for _, tt := range tests {
		in := tt.in + "; MaxNodes: 7\n" + good + "\n"
		r := NewReader(strings.NewReader(in), "x.swf")
		h, err := r.Header()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: Header() error %v, want %s", tt.in, err, tt.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Field != 0 {
			t.Errorf("%q: error %#v is not a whole-line *ParseError", tt.in, err)
		}
		if h.MaxNodes != 7 {
			t.Errorf("%q: the rest of the header was not read: %+v", tt.in, h)
		}
		if _, err := r.Next(); err != nil {
			t.Errorf("%q: Next after a header error: %v", tt.in, err)
		}

		// Without an explicit Header call, Next returns the error once.
		r = NewReader(strings.NewReader(in), "x.swf")
		if _, err := r.Next(); err == nil || err.Error() != tt.want {
			t.Errorf("%q: first Next error %v, want %s", tt.in, err, tt.want)
		}
		if j, err := r.Next(); err != nil || j != goodJob {
			t.Errorf("%q: second Next = %v, %v", tt.in, j, err)
		}

		// Under SkipBad the value is ignored and counted.
		r = NewReader(strings.NewReader(in), "x.swf")
		r.SkipBad(true)
		h, err = r.Header()
		if err != nil || r.Skipped() != 1 || len(r.SkippedErrors()) != 1 ||
			r.SkippedErrors()[0].Error() != tt.want || len(h.Comments) != strings.Count(tt.in, "\n")+1 {
			t.Errorf("%q: SkipBad: Header() = %+v, %v; skipped %d %v", tt.in, h, err, r.Skipped(), r.SkippedErrors())
		}
	}
}

// rec returns the good record with field k (1-based) replaced by v.
func rec(k int, v string) string {
	f := strings.Fields(good)
	f[k-1] = v
	return strings.Join(f, " ")
}

func TestRecordErrors(t *testing.T) {
	neg := " is negative (the only negative value allowed is -1, unknown)"
	tooLate := " is out of range (a time is at most 10^15 s)"
	tests := []struct {
		name  string
		in    string
		line  int
		field int
		want  string
	}{
		{"17 fields", "; c\n;\n" + strings.TrimSuffix(good, " -1") + "\n", 3, 0,
			"x.swf:3: expected 18 fields, got 17"},
		{"19 fields", good + " 5\n", 1, 0, "x.swf:1: expected 18 fields, got 19"},
		{"inline comment", good + " ; note\n", 1, 0, "x.swf:1: expected 18 fields, got 20"},
		{"one field", "garbage\n", 1, 0, "x.swf:1: expected 18 fields, got 1"},
		{"second record", good + "\n\n" + rec(4, "abc") + "\n", 3, 4,
			`x.swf:3: field 4 (run time): "abc" is not a number`},
		{"comma decimal", rec(10, "1,5"), 1, 10, `x.swf:1: field 10 (requested memory): "1,5" is not a number`},
		{"fraction in a count", rec(5, "1.5"), 1, 5, `x.swf:1: field 5 (allocated processors): "1.5" is not an integer`},
		{"exponent in an id", rec(11, "1e3"), 1, 11, `x.swf:1: field 11 (status): "1e3" is not an integer`},
		{"negative submit", rec(2, "-5"), 1, 2, `x.swf:1: field 2 (submit time): "-5"` + neg},
		{"negative time decimal", rec(3, "-1.5"), 1, 3, `x.swf:1: field 3 (wait time): "-1.5"` + neg},
		{"negative think time", rec(18, "-2"), 1, 18, `x.swf:1: field 18 (think time): "-2"` + neg},
		{"negative decimal", rec(6, "-0.5"), 1, 6, `x.swf:1: field 6 (average CPU time): "-0.5"` + neg},
		{"NaN", rec(7, "NaN"), 1, 7, `x.swf:1: field 7 (used memory): "NaN" is not a number`},
		{"Inf", rec(7, "+Inf"), 1, 7, `x.swf:1: field 7 (used memory): "+Inf" is not a number`},
		{"hex", rec(1, "0x10"), 1, 1, `x.swf:1: field 1 (job number): "0x10" is not a number`},
		{"huge decimal", rec(7, "1e400"), 1, 7, `x.swf:1: field 7 (used memory): "1e400" is out of range`},
		{"huge integer", rec(1, "9223372036854775808"), 1, 1,
			`x.swf:1: field 1 (job number): "9223372036854775808" is out of range`},
		{"huge time rounds over", rec(4, "9223372036854775807.5"), 1, 4,
			`x.swf:1: field 4 (run time): "9223372036854775807.5"` + tooLate},
		// Times above MaxTime (10^15 s), issue 11 §5.
		{"submit time 2^63-1", rec(2, "9223372036854775807"), 1, 2,
			`x.swf:1: field 2 (submit time): "9223372036854775807"` + tooLate},
		{"run time 2^62", rec(4, "4611686018427387904"), 1, 4,
			`x.swf:1: field 4 (run time): "4611686018427387904"` + tooLate},
		{"wait time 10^15+1", rec(3, "1000000000000001"), 1, 3,
			`x.swf:1: field 3 (wait time): "1000000000000001"` + tooLate},
		{"requested time 10^15+1", rec(9, "1000000000000001"), 1, 9,
			`x.swf:1: field 9 (requested time): "1000000000000001"` + tooLate},
		{"think time rounds to 10^15+1", rec(18, "1000000000000000.5"), 1, 18,
			`x.swf:1: field 18 (think time): "1000000000000000.5"` + tooLate},
		{"long value quoted short", rec(12, strings.Repeat("x", 50)), 1, 12,
			`x.swf:1: field 12 (user ID): "` + strings.Repeat("x", 40) + `"... is not a number`},
		{"lone sign", rec(13, "-"), 1, 13, `x.swf:1: field 13 (group ID): "-" is not a number`},
		{"lone point", rec(9, "."), 1, 9, `x.swf:1: field 9 (requested time): "." is not a number`},
		{"too long", "; h\n" + strings.Repeat("1 ", MaxLineLength/2+1) + "\n" + good, 2, 0,
			"x.swf:2: line is longer than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), "x.swf")
			_, jobs, err := readAll(t, r)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %d jobs, error %v; want a *ParseError", len(jobs), err)
			}
			if pe.Error() != tt.want || pe.Line != tt.line || pe.Field != tt.field || pe.File != "x.swf" {
				t.Errorf("got %q (line %d field %d), want %q (line %d field %d)",
					pe.Error(), pe.Line, pe.Field, tt.want, tt.line, tt.field)
			}
		})
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		k    int
		in   string
		want Job
	}{
		{5, "2.0", func() Job { j := goodJob; j.AllocProcs = 2; return j }()},
		{5, "+2", func() Job { j := goodJob; j.AllocProcs = 2; return j }()},
		{5, "007", func() Job { j := goodJob; j.AllocProcs = 7; return j }()},
		{3, "-1.0", func() Job { j := goodJob; j.Wait = -1; return j }()},
		{3, "-0", func() Job { j := goodJob; j.Wait = 0; return j }()},
		{4, "12.5", func() Job { j := goodJob; j.Run = 13; return j }()},
		{4, "12.49", func() Job { j := goodJob; j.Run = 12; return j }()},
		{4, "0.5", func() Job { j := goodJob; j.Run = 1; return j }()},
		{4, ".4", func() Job { j := goodJob; j.Run = 0; return j }()},
		{18, "3.", func() Job { j := goodJob; j.ThinkTime = 3; return j }()},
		{9, "1000000000000000", func() Job { j := goodJob; j.ReqTime = 1_000_000_000_000_000; return j }()},
		{2, "999999999999999.5", func() Job { j := goodJob; j.Submit = 1_000_000_000_000_000; return j }()},
		{1, "9223372036854775807", func() Job { j := goodJob; j.ID = 9223372036854775807; return j }()},
		{6, "12.25", func() Job { j := goodJob; j.AvgCPU = 12.25; return j }()},
		{6, "1e3", func() Job { j := goodJob; j.AvgCPU = 1000; return j }()},
		{7, "-0.0", func() Job { j := goodJob; j.UsedMem = 0; return j }()},
		{7, "-1e0", func() Job { j := goodJob; j.UsedMem = -1; return j }()},
		{10, "+.5", func() Job { j := goodJob; j.ReqMem = 0.5; return j }()},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader("\t "+rec(tt.k, tt.in)+"  \t\r\n"), "")
		j, err := r.Next()
		if err != nil || j != tt.want {
			t.Errorf("field %d = %q: got %+v, %v; want %+v", tt.k, tt.in, j, err, tt.want)
		}
	}
}

func TestContinueAfterError(t *testing.T) {
	in := good + "\n" + rec(4, "x") + "\n; comment\n" + rec(1, "2") + "\n"
	r := NewReader(strings.NewReader(in), "")
	var got []string
	for {
		j, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, err.Error())
			continue
		}
		got = append(got, "job "+string(rune('0'+j.ID))+" line "+string(rune('0'+r.Line())))
	}
	want := []string{"job 1 line 1", `line 2: field 4 (run time): "x" is not a number`, "job 2 line 4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after EOF: %v", err)
	}
}

func TestSkipBad(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("; MaxNodes: 4\n")                           // 1
	sb.WriteString(good + "\n")                                 // 2
	sb.WriteString(rec(5, "-3") + "\n")                         // 3 bad
	sb.WriteString("1 2 3\n")                                   // 4 bad
	sb.WriteString("\n; comment\n")                             // 5, 6
	sb.WriteString(rec(1, "2") + "\n")                          // 7
	sb.WriteString(strings.Repeat("9", MaxLineLength+1) + "\n") // 8 bad
	for range 12 {                                              // 9..20 bad
		sb.WriteString(rec(6, "y") + "\n")
	}
	sb.WriteString(rec(1, "3")) // 21, no final newline
	r := NewReader(strings.NewReader(sb.String()), "s.swf")
	r.SkipBad(true)
	_, jobs, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[0].ID != 1 || jobs[1].ID != 2 || jobs[2].ID != 3 {
		t.Errorf("jobs %+v", jobs)
	}
	if r.Skipped() != 15 {
		t.Errorf("Skipped() = %d, want 15", r.Skipped())
	}
	errs := r.SkippedErrors()
	if len(errs) != MaxSkippedErrors {
		t.Fatalf("%d skipped errors kept, want %d", len(errs), MaxSkippedErrors)
	}
	wantLines := []int{3, 4, 8, 9, 10, 11, 12, 13, 14, 15}
	for i, e := range errs {
		if e.Line != wantLines[i] {
			t.Errorf("skipped error %d at line %d, want %d: %v", i, e.Line, wantLines[i], e)
		}
	}
	if errs[0].Field != 5 || errs[1].Field != 0 || errs[2].Msg != "line is longer than 1048576 bytes" || errs[3].Field != 6 {
		t.Errorf("skipped errors %v", errs)
	}
	if r.Line() != 21 {
		t.Errorf("Line() = %d, want 21", r.Line())
	}
}

// failReader returns data, then err.
type failReader struct {
	data []byte
	err  error
}

func (f *failReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestIOError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(&failReader{data: []byte(good + "\n" + good[:10]), err: boom}, "f.swf")
	r.SkipBad(true)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // sticky, and not skipped
		_, err := r.Next()
		if !errors.Is(err, boom) || err.Error() != "f.swf:2: boom" {
			t.Errorf("got %v, want f.swf:2: boom", err)
		}
	}
	if r.Skipped() != 0 {
		t.Errorf("Skipped() = %d", r.Skipped())
	}
}

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	text := "; MaxNodes: 8\n" + good + "\n" + rec(1, "2") + "\n"
	gz := gzipBytes(t, text)
	dir := t.TempDir()
	files := map[string][]byte{
		"a.swf.gz":     gz,
		"gz-named.swf": gz,                                                          // detected by magic bytes
		"plain.swf.gz": []byte(text),                                                // not gzip despite the name
		"two.swf.gz":   append(gzipBytes(t, text[:20]), gzipBytes(t, text[20:])...), // multistream
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, c, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h, jobs, err := readAll(t, r)
		if err != nil || h.MaxNodes != 8 || len(jobs) != 2 || jobs[0] != goodJob || jobs[1].ID != 2 {
			t.Errorf("%s: header %+v, jobs %+v, err %v", name, h, jobs, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}

	// Errors name the path.
	bad := filepath.Join(dir, "bad.swf.gz")
	os.WriteFile(bad, gzipBytes(t, good+"\n"+rec(2, "z")+"\n"), 0o644)
	r, c, err := Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = readAll(t, r)
	if want := bad + `:2: field 2 (submit time): "z" is not a number`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Open(filepath.Join(dir, "missing.swf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := Open(dir); err == nil {
		t.Errorf("directory: no error")
	}
	// A bad gzip header fails in Open.
	hdr := filepath.Join(dir, "hdr.gz")
	os.WriteFile(hdr, []byte{0x1f, 0x8b, 0, 0}, 0o644)
	if _, _, err := Open(hdr); err == nil || !strings.HasPrefix(err.Error(), hdr+": ") {
		t.Errorf("bad gzip header: %v", err)
	}
	// A truncated gzip stream fails when read, with the path and line, and
	// is not skipped under SkipBad.
	var text strings.Builder
	for range 2000 {
		text.WriteString(good + "\n")
	}
	gz := gzipBytes(t, text.String())
	trunc := filepath.Join(dir, "trunc.swf.gz")
	os.WriteFile(trunc, gz[:len(gz)/2], 0o644)
	r, c, err := Open(trunc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r.SkipBad(true)
	_, jobs, err := readAll(t, r)
	var pe *ParseError
	if err == nil || errors.As(err, &pe) || !errors.Is(err, io.ErrUnexpectedEOF) ||
		!strings.HasPrefix(err.Error(), trunc+":") || len(jobs) == 0 || len(jobs) >= 2000 {
		t.Errorf("truncated gzip: %d jobs, error %v", len(jobs), err)
	}
	// An empty file is an empty log.
	empty := filepath.Join(dir, "empty.swf")
	os.WriteFile(empty, nil, 0o644)
	r, c, err = Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if h, jobs, err := readAll(t, r); err != nil || len(jobs) != 0 || h.UnixStartTime != -1 {
		t.Errorf("empty: %+v %v %v", h, jobs, err)
	}
}

func TestParseErrorFormat(t *testing.T) {
	tests := []struct {
		e    ParseError
		want string
	}{
		{ParseError{File: "KTH.swf", Line: 123, Field: 4, Msg: `"abc" is not a number`},
			`KTH.swf:123: field 4 (run time): "abc" is not a number`},
		{ParseError{File: "x.swf", Line: 7, Msg: "expected 18 fields, got 17"}, "x.swf:7: expected 18 fields, got 17"},
		{ParseError{Line: 7, Field: 18, Msg: "m"}, "line 7: field 18 (think time): m"},
		{ParseError{File: "f", Line: 1, Field: 19, Msg: "m"}, "f:1: field 19 (?): m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestLongLines: lines longer than the read buffer are read whole up to
// MaxLineLength (line ending not counted), and rejected beyond it.
func TestLongLines(t *testing.T) {
	pad := func(n int) string { // the good record, padded to n bytes
		return good + strings.Repeat(" ", n-len(good))
	}
	tests := []struct {
		in   string
		jobs int
		err  string
	}{
		{pad(200<<10) + "\n" + good + "\n", 2, ""},
		{pad(MaxLineLength) + "\r\n" + good, 2, ""},
		{pad(MaxLineLength), 1, ""},
		{"; " + strings.Repeat("c", MaxLineLength-2) + "\n" + good, 1, ""},
		{pad(MaxLineLength+1) + "\n" + good, 0, "l.swf:1: line is longer than 1048576 bytes"},
		{good + "\n" + pad(MaxLineLength+1), 1, "l.swf:2: line is longer than 1048576 bytes"},
		{good + "\n" + pad(3*MaxLineLength) + "\r\n" + good, 1, "l.swf:2: line is longer than 1048576 bytes"},
	}
	for i, tt := range tests {
		r := NewReader(strings.NewReader(tt.in), "l.swf")
		_, jobs, err := readAll(t, r)
		if len(jobs) != tt.jobs || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%d: %d jobs, error %v; want %d, %q", i, len(jobs), err, tt.jobs, tt.err)
		}
		// Under SkipBad the long line is skipped and reading goes on.
		r = NewReader(strings.NewReader(tt.in), "l.swf")
		r.SkipBad(true)
		_, jobs, err = readAll(t, r)
		want := strings.Count(tt.in, good)
		if err != nil || len(jobs) != want-r.Skipped() || r.Skipped() != btoi(tt.err != "") {
			t.Errorf("%d: SkipBad: %d jobs, %d skipped, error %v", i, len(jobs), r.Skipped(), err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// endless is an io.Reader of n bytes 'x' (one endless line), counting
// what was read.
type endless struct{ n, read int }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	k := min(len(p), e.n-e.read)
	for i := range k {
		p[i] = 'x'
	}
	e.read += k
	return k, nil
}

// TestLongLineStopsEarly: a line longer than MaxLineLength is reported as
// soon as it is known to be too long, without reading the rest of it (a
// 64 MiB line stops after at most MaxLineLength plus two buffers); under
// SkipBad the rest is then skipped and the next line read.
func TestLongLineStopsEarly(t *testing.T) {
	e := &endless{n: 64 << 20}
	r := NewReader(e, "bomb.swf")
	_, err := r.Next()
	if err == nil || err.Error() != "bomb.swf:1: line is longer than 1048576 bytes" {
		t.Fatalf("got %v", err)
	}
	if limit := MaxLineLength + 2*bufSize; e.read > limit {
		t.Errorf("read %d bytes of the long line before the error; want at most %d", e.read, limit)
	}
	// Strict reading may go on: the rest of the line is skipped, then EOF.
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the long line: %v, want EOF", err)
	}

	in := io.MultiReader(&endless{n: 3 * MaxLineLength}, strings.NewReader("\n"+good+"\n"))
	r = NewReader(in, "bomb.swf")
	r.SkipBad(true)
	j, err := r.Next()
	if err != nil || j != goodJob || r.Line() != 2 || r.Skipped() != 1 {
		t.Errorf("SkipBad: %+v, %v at line %d, %d skipped; want the good job at line 2, 1 skipped", j, err, r.Line(), r.Skipped())
	}
}
