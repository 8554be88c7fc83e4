package cluster

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
)

// declaredFile is a scenario of eleven arrays of a million elements
// each, item i written by item(i) on line 5+i at column 3, the list
// opened by open (line 4) and closed by end.
func declaredFile(open, end string, item func(i int) string) string {
	var b strings.Builder
	b.WriteString("max_array_size: 1000000\nhosts: [{name: h, slots: 1}]\nqueues: [{name: q}]\n" + open + "\n")
	for i := range 11 {
		b.WriteString(item(i) + "\n")
	}
	b.WriteString(end)
	return b.String()
}

// TestDeclaredJobsCap: eleven arrays of a million elements each declare
// 11,000,000 jobs, more than MaxScenarioJobs: the error is at jobs[10]
// (line 15, column 3 in each file below), the first item where the sum
// passes 10,000,000, and comes before any element is made: Parse
// allocates less than 16 MiB in all (making the elements took 5.4 GB).
// The list is read one item at a time (a block list, with or without
// aliases), whole (a flow list), with the index list an alias, or with
// the key written with an escape.
func TestDeclaredJobsCap(t *testing.T) {
	id := func(i int) int { return 1 + 1_000_000*i }
	for _, tc := range []struct {
		name, text string
	}{
		{"block list", declaredFile("jobs:", "", func(i int) string { return fmt.Sprintf("- {id: %d, array: 1-1000000}", id(i)) })},
		{"aliases", declaredFile("jobs:", "", func(i int) string {
			if i == 0 {
				return "- &a {id: 1, array: 1-1000000}"
			}
			return "- *a"
		})},
		{"flow list", declaredFile("jobs: [", "]\n", func(i int) string { return fmt.Sprintf("  {id: %d, array: 1-1000000},", id(i)) })},
		{"array alias", declaredFile("jobs:", "", func(i int) string {
			if i == 0 {
				return "- {id: 1, array: &r 1-1000000}"
			}
			return fmt.Sprintf("- {id: %d, array: *r}", id(i))
		})},
		{"escaped key", declaredFile("jobs:", "", func(i int) string { return fmt.Sprintf(`- {id: %d, "arr\x61y": 1-1000000}`, id(i)) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := len(tc.text); n > 512 {
				t.Fatalf("the file is %d bytes", n)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse("big.yaml", []byte(tc.text))
			runtime.ReadMemStats(&after)
			want := "big.yaml:15:3: jobs[10]: jobs[0] to jobs[10] declare 11000000 jobs (an array's elements count one each), more than 10000000, the most a scenario may hold (checked before any job is made)"
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Fatalf("Parse allocated %d bytes before failing", alloc)
			}
		})
	}
}

// TestDeclaredMalformedFirst: an item that does not say its size (an
// index list that does not parse) stops the count there, and the error
// is that item's, as before: the jobs before it (two arrays of 10) were
// made, nothing after.
func TestDeclaredMalformedFirst(t *testing.T) {
	text := "max_array_size: 1000000\nhosts: [{name: h, slots: 1}]\nqueues: [{name: q}]\njobs:\n" +
		"- {id: 1, array: 1-10}\n- {id: 11, array: 1-10}\n- {id: 21, array: 1-x}\n- {id: 31, array: 1-1000000}\n" +
		strings.Repeat("- {id: 1, array: 1-1000000}\n", 10)
	_, err := Parse("t.yaml", []byte(text))
	want := `t.yaml:7:19: jobs[2].array: array: col 3: expected a digit, got 'x'`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// TestCheckDeclaredLimit: with a limit of 10, items declaring 4
// ("1-4"), 1, and 5 ("2-10:2" is 2, 4, 6, 8, 10) add up to 10, which
// passes; a fourth of 1 makes 11 at jobs[3], the error naming it.
func TestCheckDeclaredLimit(t *testing.T) {
	for _, tc := range []struct {
		jobs string
		want string
	}{
		{`[{id: 1, array: "1-4"}, {id: 5}, {id: 6, array: "2-10:2"}]`, ""},
		{`[{id: 1, array: "1-4"}, {id: 5}, {id: 6, array: "2-10:2"}, {id: 11}]`,
			"t.yaml:1:60: jobs[3]: jobs[0] to jobs[3] declare 11 jobs (an array's elements count one each), more than 10, the most a scenario may hold (checked before any job is made)"},
	} {
		l := &loader{file: "t.yaml", budget: 1_000_000, c: &Cluster{MaxArraySize: 1000}}
		root, err := l.parseYAML([]byte(tc.jobs))
		if err != nil {
			t.Fatal(err)
		}
		items, _, err := l.sequence(root, "jobs")
		if err != nil {
			t.Fatal(err)
		}
		work := l.work
		err = l.checkDeclared(func(i int) (ast.Node, bool) {
			if i < len(items) {
				return items[i], true
			}
			return nil, false
		}, 10)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: got %v, want %q", tc.jobs, err, tc.want)
		}
		if l.work != work {
			t.Errorf("%s: work %d after, %d before", tc.jobs, l.work, work)
		}
	}
}
