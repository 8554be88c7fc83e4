package swf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestWrite(t *testing.T) {
	j := goodJob
	j.AvgCPU, j.UsedMem, j.ReqMem = 12.25, 0, 1024
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(goodJob); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(j); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := good + "\n" + "1 0 10 100 4 12.25 0 4 200 1024 1 1 1 -1 -1 -1 -1 -1\n"
	if buf.String() != want {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
}

func TestWriteFloats(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{-1, "-1"},
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{0.5, "0.5"},
		{1.0 / 3, "0.3333333333333333"},
		{123456.789, "123456.789"},
		{1e-6, "0.000001"},
		{1e-7, "1e-07"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{5e-324, "5e-324"},
	}
	for _, tt := range tests {
		if got := string(appendFloat(nil, tt.f)); got != tt.want {
			t.Errorf("appendFloat(%g) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestWriteInvalid(t *testing.T) {
	tests := []struct {
		mod  func(*Job)
		want string
	}{
		{func(j *Job) { j.Wait = -2 }, "swf: job 1: field 3 (wait time): -2 is not a valid value"},
		{func(j *Job) { j.ThinkTime = math.MinInt64 }, "swf: job 1: field 18 (think time): -9223372036854775808 is not"},
		{func(j *Job) { j.AvgCPU = math.NaN() }, "swf: job 1: field 6 (average CPU time): NaN is not"},
		{func(j *Job) { j.UsedMem = math.Inf(1) }, "swf: job 1: field 7 (used memory): +Inf is not"},
		{func(j *Job) { j.ReqMem = -0.5 }, "swf: job 1: field 10 (requested memory): -0.5 is not"},
		{func(j *Job) { j.Submit = 1_000_000_000_000_001 }, "swf: job 1: field 2 (submit time): 1000000000000001 is not a valid value"},
		{func(j *Job) { j.Run = math.MaxInt64 }, "swf: job 1: field 4 (run time): 9223372036854775807 is not a valid value"},
	}
	for _, tt := range tests {
		j := goodJob
		tt.mod(&j)
		var buf bytes.Buffer
		w := NewWriter(&buf)
		err := w.Write(j)
		w.Flush()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("got %v, want %s...", err, tt.want)
		}
		if buf.Len() != 0 {
			t.Errorf("wrote %q", buf.String())
		}
	}
}

func TestWriteHeader(t *testing.T) {
	tests := []struct {
		name string
		h    Header
		want string
	}{
		{"zero", Header{}, ""},
		{"unset", Header{UnixStartTime: -1}, ""},
		{"fields only", Header{MaxNodes: 100, MaxProcs: 400, UnixStartTime: 843480031},
			"; MaxNodes: 100\n; MaxProcs: 400\n; UnixStartTime: 843480031\n"},
		{"comments as given",
			Header{MaxNodes: 100, UnixStartTime: -1, Comments: []string{"Version: 2.2", "", "   indented", "MaxNodes: 100 (n)"}},
			"; Version: 2.2\n;\n;    indented\n; MaxNodes: 100 (n)\n"},
		{"missing keys appended",
			Header{MaxNodes: 4, MaxProcs: 8, UnixStartTime: 5, Comments: []string{"MaxProcs: 8"}},
			"; MaxProcs: 8\n; MaxNodes: 4\n; UnixStartTime: 5\n"},
		{"line breaks in a comment", Header{Comments: []string{"a\nb\r\nc\n"}}, "; a\n; b\n; c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			if err := w.WriteHeader(tt.h); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if buf.String() != tt.want {
				t.Errorf("got %q, want %q", buf.String(), tt.want)
			}
			h, err := NewReader(&buf, "").Header()
			if err != nil || h.MaxNodes != tt.h.MaxNodes || h.MaxProcs != tt.h.MaxProcs ||
				(h.UnixStartTime != tt.h.UnixStartTime && tt.h.UnixStartTime > 0) {
				t.Errorf("read back %+v, %v", h, err)
			}
		})
	}
}

func TestWriteHeaderErrors(t *testing.T) {
	tests := []struct {
		h    Header
		want string
	}{
		{Header{MaxProcs: 64, Comments: []string{"MaxProcs: 32"}},
			"swf: header MaxProcs is 64 but Comments declare 32"},
		{Header{MaxNodes: 0, Comments: []string{"MaxNodes: 32", "MaxNodes: 16"}},
			"swf: header MaxNodes is 0 but Comments declare 16"},
		{Header{Comments: []string{"MaxNodes: lots"}},
			`swf: header comment "MaxNodes: lots": MaxNodes: "lots" is not a number`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := NewWriter(&buf).WriteHeader(tt.h)
		if err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	w := NewWriter(errWriter{})
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = w.Write(goodJob)
	}
	if err == nil || err.Error() != "disk full" {
		t.Errorf("Write: %v", err)
	}
	if err := w.Flush(); err == nil {
		t.Errorf("Flush: no error")
	}
	if err := w.WriteHeader(Header{MaxNodes: 1}); err == nil {
		t.Errorf("WriteHeader: no error")
	}
}

// genInt generates an integer field value: -1 or any non-negative int64,
// small values often.
func genInt(t *rapid.T, label string) int64 {
	return rapid.OneOf(rapid.Just[int64](-1), rapid.Int64Range(0, 100),
		rapid.Int64Range(0, math.MaxInt64)).Draw(t, label)
}

// genFloat generates a decimal field value: -1 or any finite non-negative
// float64, including integers, tiny and huge values.
func genFloat(t *rapid.T, label string) float64 {
	return rapid.OneOf(rapid.Just(-1.0), rapid.Just(0.0),
		rapid.Float64Range(0, 1e6), rapid.Float64Range(0, math.MaxFloat64),
		rapid.Custom(func(t *rapid.T) float64 {
			return float64(rapid.Int64Range(0, 1<<53).Draw(t, "i"))
		})).Draw(t, label)
}

// genTime generates a time field value: -1 or any time up to MaxTime,
// small values and the bound often.
func genTime(t *rapid.T, label string) int64 {
	return rapid.OneOf(rapid.Just[int64](-1), rapid.Int64Range(0, 100),
		rapid.Just[int64](MaxTime), rapid.Int64Range(0, MaxTime)).Draw(t, label)
}

func genJob(t *rapid.T) Job {
	return Job{
		ID: genInt(t, "id"), Submit: genTime(t, "submit"), Wait: genTime(t, "wait"),
		Run: genTime(t, "run"), AllocProcs: genInt(t, "alloc"), AvgCPU: genFloat(t, "cpu"),
		UsedMem: genFloat(t, "mem"), ReqProcs: genInt(t, "reqprocs"), ReqTime: genTime(t, "reqtime"),
		ReqMem: genFloat(t, "reqmem"), Status: genInt(t, "status"), User: genInt(t, "user"),
		Group: genInt(t, "group"), Executable: genInt(t, "exe"), Queue: genInt(t, "queue"),
		Partition: genInt(t, "part"), PrecedingID: genInt(t, "prec"), ThinkTime: genTime(t, "think"),
	}
}

// TestRoundTrip: writing a header and jobs, then reading them, gives the
// same header values and jobs.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := Header{
			MaxNodes:      rapid.Int64Range(0, math.MaxInt64).Draw(t, "nodes"),
			MaxProcs:      rapid.Int64Range(0, math.MaxInt64).Draw(t, "procs"),
			UnixStartTime: rapid.Int64Range(-1, math.MaxInt64).Draw(t, "start"),
			Comments: rapid.SliceOfN(rapid.StringMatching(`[ -~]{0,30}`), 0, 5).
				Filter(func(cs []string) bool { _, _, err := scanComments(cs); return err == nil }).
				Draw(t, "comments"),
		}
		jobs := rapid.SliceOfN(rapid.Custom(genJob), 0, 20).Draw(t, "jobs")
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.WriteHeader(h); err != nil {
			// Only a conflict between the comments and the fields is an error.
			if !strings.Contains(err.Error(), "but Comments declare") {
				t.Fatal(err)
			}
			h.Comments = nil
			if err := w.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
		}
		for _, j := range jobs {
			if err := w.Write(j); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r := NewReader(&buf, "rt.swf")
		got, err := r.Header()
		if err != nil {
			t.Fatalf("%v in\n%s", err, buf.String())
		}
		want := h
		if want.UnixStartTime == 0 {
			want.UnixStartTime = -1 // 0 is not written
		}
		if got.MaxNodes != want.MaxNodes || got.MaxProcs != want.MaxProcs || got.UnixStartTime != want.UnixStartTime {
			t.Fatalf("header %+v, want %+v", got, want)
		}
		if len(h.Comments) > 0 && !reflect.DeepEqual(got.Comments[:len(h.Comments)], trimComments(h.Comments)) {
			t.Fatalf("comments %q, want %q", got.Comments, h.Comments)
		}
		for i, want := range jobs {
			j, err := r.Next()
			if err != nil || j != want {
				t.Fatalf("job %d: got %+v, %v; want %+v", i, j, err, want)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the jobs: %v", err)
		}
	})
}

// trimComments is what the Reader gives back for comments written by the
// Writer: trailing whitespace is not kept.
func trimComments(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.TrimRight(c, " \t\r\v\f")
	}
	return out
}
