package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// This file checks that reading the jobs one at a time (scenario_stream.go)
// gives what reading the whole document gives.

// diffClusters returns the first difference between two loaded clusters,
// or "" (capacities compare NaN equal to NaN).
func diffClusters(a, b *Cluster) string {
	if len(a.Hosts) != len(b.Hosts) {
		return fmt.Sprintf("%d hosts, %d hosts", len(a.Hosts), len(b.Hosts))
	}
	for i := range a.Hosts {
		x, y := a.Hosts[i], b.Hosts[i]
		if !sameFloats(x.Capacity, y.Capacity) {
			return fmt.Sprintf("hosts[%d].Capacity %v, %v", i, x.Capacity, y.Capacity)
		}
		x.Capacity, y.Capacity = nil, nil
		if !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("hosts[%d] %+v, %+v", i, x, y)
		}
	}
	if len(a.Jobs) != len(b.Jobs) {
		return fmt.Sprintf("%d jobs, %d jobs", len(a.Jobs), len(b.Jobs))
	}
	for i := range a.Jobs {
		if !reflect.DeepEqual(a.Jobs[i], b.Jobs[i]) {
			return fmt.Sprintf("jobs[%d] %+v, %+v", i, a.Jobs[i], b.Jobs[i])
		}
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"Resources", a.Resources, b.Resources}, {"Shared", a.Shared, b.Shared}, {"Queues", a.Queues, b.Queues},
		{"Limits", a.Limits, b.Limits}, {"UserGroups", a.UserGroups, b.UserGroups}, {"HostGroups", a.HostGroups, b.HostGroups},
		{"MaxArraySize", a.MaxArraySize, b.MaxArraySize}, {"ReservationUsage", a.ReservationUsage, b.ReservationUsage},
		{"queueHosts", a.queueHosts, b.queueHosts}, {"groups", a.groups, b.groups}, {"gpuRes", a.gpuRes, b.gpuRes},
	} {
		if !reflect.DeepEqual(f.x, f.y) {
			return fmt.Sprintf("%s %+v, %+v", f.name, f.x, f.y)
		}
	}
	return ""
}

// compareStreamed parses data both ways. It fails the test when the jobs
// read one at a time give a Cluster the whole document does not give,
// and returns whether they were read so and both errors.
func compareStreamed(t *testing.T, name string, data []byte) (streamed bool, errS, errW error) {
	t.Helper()
	cs, final, errS := parseStreamed(name, data)
	cw, errW := parseWhole(name, data)
	switch {
	case errS == nil && !final:
		return false, nil, errW
	case errS == nil && errW != nil:
		t.Fatalf("%s: read a job at a time it loads, read whole: %v", name, errW)
	case errS == nil:
		if d := diffClusters(cs, cw); d != "" {
			t.Fatalf("%s: a job at a time and whole differ: %s", name, d)
		}
	}
	return true, errS, errW
}

// TestStreamedScenarios: every scenario of the repository with a jobs
// list loads the same read a job at a time, and is read so.
func TestStreamedScenarios(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/scenario/*.yaml", "../testdata/scenarios/*.yaml", "../testdata/bench/*.yaml", "../examples/*.yaml"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d scenarios", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		streamed, errS, errW := compareStreamed(t, f, data)
		if errW != nil {
			t.Errorf("%s: %v", f, errW)
		}
		if strings.Contains(string(data), "\njobs:\n") && (!streamed || errS != nil) {
			t.Errorf("%s: not read a job at a time: %v", f, errS)
		}
	}
}

// TestStreamedErrors: the errors of errorCases, read a job at a time,
// are those of the whole document (which Parse gives for files of at most
// 16 MiB), but for a few whose differences are listed here.
func TestStreamedErrors(t *testing.T) {
	differ := map[string]string{}
	n := 0
	for _, tc := range errorCases {
		streamed, errS, errW := compareStreamed(t, tc.name, []byte(tc.in))
		if !streamed {
			continue
		}
		n++
		if errS == nil || errW == nil {
			t.Errorf("%s: errors %v and %v", tc.name, errS, errW)
			continue
		}
		var se, we *ScenarioError
		if !errors.As(errS, &se) || !errors.As(errW, &we) {
			t.Errorf("%s: %T, %T", tc.name, errS, errW)
			continue
		}
		if got, want := se.Error(), we.Error(); got != want && differ[tc.name] != got {
			t.Errorf("%s:\n a job at a time: %s\n whole:           %s", tc.name, got, want)
		}
	}
	if n < 40 {
		t.Errorf("only %d error cases read a job at a time", n)
	}
}

// streamLayouts are scenarios whose jobs lists are laid out in the ways
// YAML allows. streamed: the jobs are read one at a time, with the result
// of the whole document, an error included (which a file larger than 16
// MiB gets); else a file of at most 16 MiB is read whole.
var streamLayouts = []struct {
	name     string
	in       string
	streamed bool
}{
	{"block items", h1 + "jobs:\n  - id: 1\n    user: alice\n    resreq: rusage[mem=10]\n  - id: 2\n    tasks: 1\n", true},
	{"items at column 1", h1 + "jobs:\n- {id: 1, user: alice}\n-   id: 2\n    user: bob\n", true},
	{"comments and blank lines", h1 + "jobs: # the jobs\n\n# first\n  - {id: 1}  # one\n\n# between, at column 1\n    # indented\n  - {id: 2}\n# after\n", true},
	{"jobs before other sections", "jobs:\n  - {id: 1, queue: q}\n  - {id: 2}\n" + h1 + "queues:\n  - {name: q}\n", true},
	{"CRLF", strings.ReplaceAll(h1+"jobs:\n  - id: 1\n    user: u\n  - {id: 2}\n", "\n", "\r\n"), true},
	{"byte order mark", bom + h1 + "jobs:\n  - {id: 1}\n", true},
	{"document markers", "---\n" + h1 + "jobs:\n  - {id: 1}\n...\n", true},
	{"anchor and alias within the jobs", h1 + "jobs:\n  - &j {id: 1, user: alice, runtime: 5}\n  - <<: *j\n    id: 2\n", true},
	{"alias to a host's anchor", "hosts:\n  - {name: a, slots: &s 2}\njobs:\n  - {id: 1, tasks: *s}\n", true},
	{"alias to a later anchor", h1 + "jobs:\n  - {id: 1, tasks: *s}\n  - {id: 2, tasks: &s 1}\n", true},
	{"alias to an anchor after the list", h1 + "jobs:\n  - {id: 3, user: *u}\nqueues: [{name: &u bob}]\n", true},
	{"block scalars", h1 + "jobs:\n  - id: 1\n    resreq: |\n      rusage[mem=1]\n\n  - id: 2\n    name: >\n      a\n      b\n", true},
	{"multi-line quoted string", h1 + "jobs:\n  - id: 1\n    name: \"a\n      b\"\n", true},
	{"explicit keys and tags", h1 + "jobs:\n  - ? id\n    : 1\n    name: !!str 7\n", true},
	{"the only section", "jobs:\n  - {id: 1}\n", true},
	{"a list in a list", h1 + "jobs:\n  - - {id: 1}\n", true},
	{"empty item", h1 + "jobs:\n  -\n  - {id: 1}\n", true},
	{"empty item last", h1 + "jobs:\n  - {id: 1}\n  -\nqueues: [{name: q}]\n", true},
	{"empty item at the end", h1 + "jobs:\n  - {id: 1}\n  -\n", true},
	{"null id", h1 + "jobs:\n  - id:\n  - {id: 1}\n", true},
	{"null tasks", h1 + "jobs:\n- id: 1\n  tasks:\n- {id: 2}\n", true},
	{"null running_on slots", h1 + "jobs:\n  - id: 1\n    running_on:\n      a:\nqueues: [{name: q}]\n", true},
	{"jobs twice", h1 + "jobs:\n  - {id: 1}\njobs:\n  - {id: 2}\n", true},
	{"a plain scalar over item lines", h1 + "jobs:\n  - id: 1\n    name: a\n  - b\n", true},
	{"syntax error in a job", h1 + "jobs:\n  - {id: 1}\n  - {id: 2\n  - {id: 3}\n", true},
	{"flow mapping over item lines", h1 + "jobs:\n  - {id: 1,\n  - 2: 3}\n", true},
	{"an empty block scalar before jobs:", "hosts:\n  - name: a\n    slots: 1\n    type: |\njobs:\n  - {id: 1}\n", true},

	// Layouts the whole document reads.
	{"jobs in flow style", h1 + "jobs: [{id: 1}, {id: 2}]\n", false},
	{"jobs null", h1 + "jobs:\nqueues: [{name: q}]\n", false},
	{"jobs with an anchor", h1 + "jobs: &all\n  - {id: 1}\n", false},
	{"a tab before an item", h1 + "jobs:\n  - {id: 1}\n\t- {id: 2}\n", false},
	{"a line less indented than the items", h1 + "jobs:\n    - {id: 1}\n  - {id: 2}\n", false},
	{"quoted string over item lines", h1 + "jobs:\n  - {id: 1, name: \"a\n  - b\"}\n", false},
	{"alias after the list to a job's anchor", h1 + "jobs:\n  - {id: 1, tasks: &s 1}\nshared: {lic: *s}\n", false},
	{"top level in flow style", "{hosts: [{name: a, slots: 1}],\njobs:\n  - {id: 1}\n}\n", false},
	{"jobs: in a quoted string", "hosts: [{name: a, slots: 1, type: \"x\njobs:\n  - {id: 1}\n\"}]\n", false},
}

// TestStreamedLayouts: each layout loads (or fails) the same read a job at
// a time or whole.
func TestStreamedLayouts(t *testing.T) {
	for _, tc := range streamLayouts {
		t.Run(tc.name, func(t *testing.T) {
			streamed, errS, errW := compareStreamed(t, "t.yaml", []byte(tc.in))
			same := streamed && (errS == nil && errW == nil || errS != nil && errW != nil && errS.Error() == errW.Error())
			if same != tc.streamed {
				t.Errorf("read a job at a time: %v, %v; whole: %v", streamed, errS, errW)
			}
		})
	}
}

// FuzzStreamed checks that whatever the input, jobs read one at a time
// give the Cluster the whole document gives, or an error (compareStreamed);
// the input is tried as a scenario and as the lines of a jobs list.
func FuzzStreamed(f *testing.F) {
	for _, tc := range streamLayouts {
		f.Add([]byte(tc.in))
	}
	for _, tc := range errorCases {
		if strings.Contains(tc.in, "jobs:") && len(tc.in) <= 4096 {
			f.Add([]byte(tc.in))
		}
	}
	files, _ := filepath.Glob("../testdata/scenarios/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareStreamed(t, "fuzz.yaml", data)
		compareStreamed(t, "fuzz.yaml", append([]byte(h1+"jobs:\n"), data...))
	})
}

// TestLargeScenario: a scenario larger than 16 MiB loads when its jobs
// list is what makes it large, and its errors are precise. The files are
// made large by a comment of 16 MiB on line 5, in the jobs list or before
// it.
func TestLargeScenario(t *testing.T) {
	pad := "#" + strings.Repeat("x", MaxScenarioSize) + "\n"
	jobs := func(rest string) []byte {
		return []byte(h1 + "jobs:\n  - {id: 1}\n" + pad + "  - id: 2\n    user: bob\n" + rest)
	}
	c, err := Parse("big.yaml", jobs("queues: [{name: q}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Jobs) != 2 || c.Jobs[1].User != "bob" || c.Queues[0].Name != "q" {
		t.Errorf("jobs %+v, queues %+v", c.Jobs, c.Queues)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, jobs(""), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || len(c.Jobs) != 2 {
		t.Errorf("Load: %v", err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"a job's error", jobs("  - {id: 3, tasks: 0}\n"), "big.yaml:8:20: jobs[2].tasks: must be >= 1, got 0"},
		{"a job's YAML error", jobs("  - {id: 3\n"), "big.yaml:8:5: YAML: could not find flow mapping end token '}'"},
		{"an error after the list", jobs("queues: [{name: q, priority: x}]\n"), "big.yaml:8:30: queues[0].priority: expected an integer, got string \"x\""},
		{"duplicate id across the padding", jobs("  - {id: 1}\n"), "big.yaml:8:10: jobs[2].id: duplicate job id 1 (first at jobs[0])"},
		{"running jobs over-commit", jobs("  - {id: 3, running_on: {a: 1}}\n  - {id: 4, running_on: {a: 1}}\n"),
			"big.yaml:9:25: jobs[3].running_on: over-commits the cluster: host a: 1 slots requested, 0 free"},
		{"too large beside the jobs", []byte(pad + h1 + "jobs:\n  - {id: 1}\n"),
			"big.yaml: the file is larger than 16777216 bytes (16 MiB) without its jobs list, the most a scenario may hold beside its jobs"},
		{"no jobs list", []byte(h1 + pad + "jobs: [{id: 1}]\n"), "big.yaml: the file is larger than 16777216 bytes (16 MiB), the most a scenario may hold"},
		{"a tab", jobs("\t- {id: 3}\n"), "big.yaml:8:1: jobs: a scenario larger than 16 MiB is read one job at a time, and then its lines must be indented with spaces, not tabs"},
		{"an alias to a job's anchor after the list", jobs("  - {id: 3, tasks: &n 1}\nshared: {lic: *n}\n"),
			"big.yaml:3:1: jobs: a scenario larger than 16 MiB is read one job at a time, and then an alias after the jobs list may not name an anchor in it (&n)"},
		{"a bad character", jobs("  - {id: 3, name: \"\x01\"}\n"), "big.yaml:8:20: character U+0001 is not allowed in YAML (control characters other than tab and line breaks)"},
	} {
		if _, err := Parse("big.yaml", tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got  %v\n want %s", tc.name, err, tc.want)
		}
	}
}
