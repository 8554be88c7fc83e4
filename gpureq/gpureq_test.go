package gpureq

import (
	"errors"
	"strings"
	"testing"

	"github.com/xce-sched/xce/resreq"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Request
	}{
		{"-", Request{1, Shared}},
		{"num=2", Request{2, Shared}},
		{"num=2/host", Request{2, Shared}},
		{"mode=exclusive_process", Request{1, ExclusiveProcess}},
		{"num=4:mode=shared:j_exclusive=yes:mps=no", Request{4, Shared}},
		{"j_exclusive=yes:num=64", Request{64, Shared}},
		{"num=007", Request{7, Shared}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		back, err := Parse(got.String())
		if err != nil || back != got {
			t.Errorf("%q: canonical %q gives %+v, %v", tc.in, got.String(), back, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		col  int
		want string
	}{
		{"", 1, "empty GPU requirement"},
		{"num=2:", 7, "empty option"},
		{"num", 4, "expected '=' after \"num\""},
		{"=2", 1, "missing keyword"},
		{"num=", 5, "num needs a value"},
		{"num=0", 5, "at least 1"},
		{"num=65", 5, "at most 64"},
		{"num=123456789012", 5, "at most 64"},
		{"num=2x", 5, "whole number"},
		{"num=-1", 5, "whole number"},
		{"num=2/task", 6, "num=N/task is not supported"},
		{"num=2/gpu", 7, "expected host after '/'"},
		{"num=2:num=3", 7, "num given twice"},
		{"mode=excl", 6, "mode must be shared or exclusive_process"},
		{"num=1:j_exclusive=no", 19, "j_exclusive=no is not supported"},
		{"j_exclusive=maybe", 13, "j_exclusive must be yes or no"},
		{"mps=yes", 5, "mps=yes is not supported"},
		{"num=1:gmodel=A100", 7, "gpu_model"},
		{"num=1:aff=yes", 7, "LSF's aff= is not supported"},
		{"num=1:color=red", 7, "unknown keyword \"color\""},
		{"num=1: mode=shared", 7, "white space"},
		{strings.Repeat("x", MaxLen+1), MaxLen + 1, "longer than"},
	} {
		_, err := Parse(tc.in)
		var e *Error
		if !errors.As(err, &e) || e.Col != tc.col || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("Parse(%q) = %v; want col %d containing %q", tc.in, err, tc.col, tc.want)
		}
	}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		req, want, err string
	}{
		{"", "rusage[ngpus_physical=2]", ""},
		{"select[gpu_model == A100] rusage[mem=100] span[hosts=1]", "select[gpu_model == A100] rusage[mem=100:ngpus_physical=2] span[hosts=1]", ""},
		{"rusage[ngpus_physical=1]", "", "already asks"},
		{"2*{rusage[mem=1]} + {rusage[mem=2]}", "", "simple resource requirement"},
		{"{select[a]} || {select[b]}", "", "simple resource requirement"},
	} {
		req, err := resreq.Parse(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		before := req.String()
		got, err := Merge(req, Request{Num: 2})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Merge(%q) = %v; want error containing %q", tc.req, err, tc.err)
			}
		case err != nil:
			t.Errorf("Merge(%q): %v", tc.req, err)
		case got.String() != tc.want:
			t.Errorf("Merge(%q) = %q; want %q", tc.req, got.String(), tc.want)
		}
		if req.String() != before {
			t.Errorf("Merge(%q) changed its argument to %q", tc.req, req.String())
		}
	}
}

// FuzzParse: Parse never panics; an error is an *Error whose column lies
// within the input (or just past it); a request is within bounds and its
// canonical form parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"-", "num=2:mode=exclusive_process", "num=2/host:j_exclusive=yes", "mps=no", "num=", ":", "=", "num=2/task", "gmodel=A100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Col < 1 || e.Col > len(s)+1 || len(e.Msg) > 400 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if r.Num < 1 || r.Num > MaxDevices || (r.Mode != Shared && r.Mode != ExclusiveProcess) {
			t.Fatalf("%q: %+v", s, r)
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Fatalf("%q: canonical %q gives %+v, %v", s, r.String(), back, err)
		}
	})
}

func TestCheck(t *testing.T) {
	if Check("") != nil || Check("num=2") != nil || Check("num=0") == nil {
		t.Errorf("Check: %v %v %v", Check(""), Check("num=2"), Check("num=0"))
	}
}
