package depend

import (
	"errors"
	"strings"
	"testing"
)

// TestParse: the examples of LSF's manual and their canonical forms.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"done(312)", "done(312)"},
		{"312", "done(312)"},
		{`"210"`, `done("210")`},
		{"myjob", `done("myjob")`},
		{`done(312) && (started(Job2)||exit("99Job"))`, `done(312) && (started("Job2") || exit("99Job"))`},
		{"exit(678,0)", "exit(678, ==0)"},
		{`exit("678",!=0)`, `exit("678", !=0)`},
		{"exit(7, >= 2)", "exit(7, >=2)"},
		{"ended(12[3])", "ended(12[3])"},
		{"!done(1) || ended(2) && ended(3)", "!done(1) || ended(2) && ended(3)"},
		{"(done(1) || done(2)) && done(3)", "(done(1) || done(2)) && done(3)"},
		{"!(done(1) && done(2))", "!(done(1) && done(2))"},
		{"  done( a.b-c_1 )  ", `done("a.b-c_1")`},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if e.String() != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, e.String(), tc.want)
		}
		if back, err := Parse(e.String()); err != nil || back.String() != e.String() {
			t.Errorf("round trip of %q: %v %v", e.String(), back, err)
		}
	}
}

// TestParseErrors: each error names the column of what is wrong.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in  string
		col int
		msg string
	}{
		{"", 1, "empty dependency expression"},
		{"done(", 6, "expected a job ID or name"},
		{"done(1", 7, "expected ')' after the job"},
		{"finished(1)", 1, `unknown condition "finished" (expected done, exit, ended or started)`},
		{"done(1, 2)", 7, "only exit() takes an exit code"},
		{"exit(1, 256)", 9, "expected an exit code from 0 to 255"},
		{"exit(1, >x)", 10, "expected an exit code from 0 to 255"},
		{"exit(1, -1)", 9, "expected an exit code from 0 to 255"},
		{"done(1) &&", 11, "expected a condition (done, exit, ended, started) or a job"},
		{"done(1) done(2)", 9, `unexpected "done(2)"`},
		{"(done(1)", 9, "expected ')'"},
		{`done("x)`, 6, "unterminated job name"},
		{`done("")`, 6, "empty job name"},
		{"done(0)", 6, `expected a whole number from 1 up, got "0"`},
		{"done(1[0])", 8, `expected a whole number from 1 up, got "0"`},
		{"done(1[2)", 9, "expected ']' after the array index"},
		{"done(#)", 6, `expected a job ID or name, got "#)"`},
		{"done(99999999999999999999)", 6, `expected a whole number from 1 up, got "99999999999999999999"`},
		{"done(1[*])", 8, "[*] (one-to-one array dependencies) is not supported"},
		{"done(1[2147483647])", 8, "array index 2147483647 is above 2147483646"},
	} {
		_, err := Parse(tc.in)
		var e *Error
		if !errors.As(err, &e) || e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("Parse(%q) = %v, want col %d: %s", tc.in, err, tc.col, tc.msg)
		}
	}
	nest := func(n int) string { return strings.Repeat("(", n) + "done(1)" + strings.Repeat(")", n) }
	if _, err := Parse(nest(MaxDepth)); err != nil {
		t.Errorf("nesting of %d: %v", MaxDepth, err)
	}
	if _, err := Parse(nest(MaxDepth + 1)); err == nil {
		t.Errorf("nesting of %d parses", MaxDepth+1)
	}
	chain := func(n int) string { return strings.TrimSuffix(strings.Repeat("done(1) && ", n), " && ") }
	if e, err := Parse(chain(MaxConditions)); err != nil || len(e.Refs()) != MaxConditions {
		t.Errorf("%d conditions: %v", MaxConditions, err)
	}
	if _, err := Parse(chain(MaxConditions + 1)); err == nil || !strings.Contains(err.Error(), "more than 1000 conditions") {
		t.Errorf("%d conditions: %v", MaxConditions+1, err)
	}
}

// TestEval: each condition on each state of the job it names, and the
// operators, worked out from LSF's definitions (docs/dependencies.md).
func TestEval(t *testing.T) {
	pend := Job{State: Pending}
	run := Job{State: Running, Started: true}
	done := Job{State: Done, Started: true}
	exit3 := Job{State: Exit, ExitCode: 3, Started: true}
	killedPending := Job{State: Exit}
	for _, tc := range []struct {
		expr string
		jobs map[int64][]Job
		want Truth
	}{
		{"done(1)", map[int64][]Job{1: {pend}}, Waiting},
		{"done(1)", map[int64][]Job{1: {run}}, Waiting},
		{"done(1)", map[int64][]Job{1: {done}}, Satisfied},
		{"done(1)", map[int64][]Job{1: {exit3}}, Never},
		{"done(1)", map[int64][]Job{}, Never}, // unknown job
		{"exit(1)", map[int64][]Job{1: {exit3}}, Satisfied},
		{"exit(1)", map[int64][]Job{1: {done}}, Never},
		{"exit(1, 3)", map[int64][]Job{1: {exit3}}, Satisfied},
		{"exit(1, >3)", map[int64][]Job{1: {exit3}}, Never},
		{"exit(1, <=3)", map[int64][]Job{1: {exit3}}, Satisfied},
		{"exit(1, !=0)", map[int64][]Job{1: {killedPending}}, Never}, // exit code 0
		{"exit(1)", map[int64][]Job{1: {run}}, Waiting},
		{"ended(1)", map[int64][]Job{1: {exit3}}, Satisfied},
		{"ended(1)", map[int64][]Job{1: {done}}, Satisfied},
		{"ended(1)", map[int64][]Job{1: {run}}, Waiting},
		{"started(1)", map[int64][]Job{1: {run}}, Satisfied},
		{"started(1)", map[int64][]Job{1: {done}}, Satisfied},
		{"started(1)", map[int64][]Job{1: {pend}}, Waiting},
		{"started(1)", map[int64][]Job{1: {killedPending}}, Never},
		// Several jobs under one reference (a name, an array): all must.
		{"done(1)", map[int64][]Job{1: {done, run}}, Waiting},
		{"done(1)", map[int64][]Job{1: {done, done}}, Satisfied},
		{"done(1)", map[int64][]Job{1: {run, exit3}}, Never},
		// Operators.
		{"done(1) && done(2)", map[int64][]Job{1: {done}, 2: {run}}, Waiting},
		{"done(1) && done(2)", map[int64][]Job{1: {done}, 2: {exit3}}, Never},
		{"done(1) || done(2)", map[int64][]Job{1: {exit3}, 2: {run}}, Waiting},
		{"done(1) || done(2)", map[int64][]Job{1: {exit3}, 2: {exit3}}, Never},
		{"done(1) || done(2)", map[int64][]Job{1: {exit3}, 2: {done}}, Satisfied},
		{"!done(1)", map[int64][]Job{1: {run}}, Satisfied},
		{"!done(1)", map[int64][]Job{1: {done}}, Never},
		{"!done(1)", map[int64][]Job{1: {exit3}}, Satisfied},
	} {
		e, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		look := func(r Ref) []Job { return tc.jobs[r.ID] }
		if got := e.Eval(look); got != tc.want {
			t.Errorf("%s on %v: %d, want %d", tc.expr, tc.jobs, got, tc.want)
		}
	}
}

// TestUnmetRefs: the first condition not met, and every reference.
func TestUnmetRefs(t *testing.T) {
	e, err := Parse(`done(1) && (exit(2, 1) || ended("b"))`)
	if err != nil {
		t.Fatal(err)
	}
	look := func(r Ref) []Job {
		if r.ID == 1 {
			return []Job{{State: Done}}
		}
		return []Job{{State: Running, Started: true}}
	}
	if got := e.Unmet(look); got != "exit(2, ==1)" {
		t.Errorf("Unmet = %q, want exit(2, ==1)", got)
	}
	refs := e.Refs()
	if len(refs) != 3 || refs[0] != (Ref{ID: 1}) || refs[1] != (Ref{ID: 2}) || refs[2] != (Ref{Name: "b"}) {
		t.Errorf("Refs = %+v", refs)
	}
}

// FuzzParse: nothing panics; an error has a column within the input; an
// expression parses back from its canonical form to the same form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"done(1)", `exit("a", >=3) || !started(2[4])`, "((", "!", "exit(1,", `"`, "a&&b||c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Col < 1 || pe.Col > len(s)+1 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		back, err := Parse(e.String())
		if err != nil || back.String() != e.String() {
			t.Fatalf("%q: canonical %q parses to %v, %v", s, e.String(), back, err)
		}
		e.Eval(func(Ref) []Job { return []Job{{State: Running}} })
	})
}

// TestBind: conditions on jobs that have all ended keep their value in a
// bound copy, evaluated later where those jobs are unknown (a forecast's
// copy of the cluster); the others are looked up then.
func TestBind(t *testing.T) {
	e, err := Parse("done(1) && (done(2) || exit(3))")
	if err != nil {
		t.Fatal(err)
	}
	now := map[int64][]Job{1: {{State: Done, Started: true}}, 2: {{State: Running, Started: true}}, 3: {{State: Done, Started: true}}}
	b := e.Bind(func(r Ref) []Job { return now[r.ID] })
	if b.String() != e.String() {
		t.Errorf("bound text %q, want %q", b, e)
	}
	later := map[int64][]Job{2: {{State: Pending}}} // jobs 1 and 3 unknown later
	look := func(r Ref) []Job { return later[r.ID] }
	if got := e.Eval(look); got != Never {
		t.Errorf("unbound, with job 1 unknown: %d, want Never", got)
	}
	if got := b.Eval(look); got != Waiting {
		t.Errorf("bound, job 2 pending: %d, want Waiting", got)
	}
	if got := b.Unmet(look); got != "done(2)" {
		t.Errorf("bound Unmet %q, want done(2) (exit(3) is bound Never)", got)
	}
	later[2] = []Job{{State: Done, Started: true}}
	if got := b.Eval(look); got != Satisfied {
		t.Errorf("bound, job 2 done: %d, want Satisfied", got)
	}
}
