package submit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/xce-sched/xce/internal/event"
	"pgregory.net/rapid"
)

// zeros is an endless reader of 'a' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestPackGolden: testdata/pack/jobs.pack, submitted with -pack, gives
// the events of jobs.json (written by hand), in line order.
func TestPackGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/pack/jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []event.Submit
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	in := Input{Open: func(name string) (io.ReadCloser, error) { return os.Open(name) }}
	s, err := Parse([]string{"-pack", "testdata/pack/jobs.pack"}, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pack != "testdata/pack/jobs.pack" || len(s.Jobs) != len(want) {
		t.Fatalf("pack %q, %d jobs; want %d", s.Pack, len(s.Jobs), len(want))
	}
	for i, r := range s.Jobs {
		if got := r.Submit(); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("job %d:\n got  %+v\n want %+v", i+1, got, want[i])
		}
	}
}

// TestPackErrors: every error of a pack file, by its exact text; a bad
// line rejects the whole file.
func TestPackErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"bad line after good ones", "a\n-n 2 b\n-n x c\n", `p:3:4: -n: expected min[,max] task counts, whole numbers, in "x"`},
		{"no command", "-n 2\n", "p:1:5: command: no command after the options"},
		{"no command before a comment", "-n 2 # x\n", "p:1:9: command: no command after the options"},
		{"nothing after --", "-n 2 --\n", "p:1:8: command: no command after the options"},
		{"missing value", "ok\n-n\n", "p:2:3: -n: needs a value"},
		{"unterminated quote", "a 'b\n", "p:1:3: unterminated single quote"},
		{"-pack in a pack file", "-pack f a\n", "p:1:1: -pack: only the command line may name a pack file"},
		{"caller flag", "--json a\n", `p:1:1: unknown option "--json"`},
		{"LSF option", "-U a\n", "p:1:1: -U: LSF's bsub option -U is not supported by xce"},
		{"empty command name", "'' a\n", "p:1:1: command: the command name is empty"},
		{"-R at end of input", `-R "select[mem>1" a`, "p:1:18: -R: expected ']' after select expression"},
		{"-n against compound", "-n 3 -R 2*{a} a", "p:1:4: -n: 3 tasks, but the compound -R's terms ask for 2"},
		{"empty file", "", "p: pack: no job: every line is blank or a comment"},
		{"comments only", "\n# c\n  \n\t# d\r\n", "p: pack: no job: every line is blank or a comment"},
		{"NUL", "a\x00\n", "p:1:2: pack: NUL byte"},
		{"invalid UTF-8", "a\nb \xfe\n", "p:2:3: pack: invalid UTF-8 byte 0xfe"},
		{"invalid UTF-8 in a comment", "# \xfe\na\n", "p:1:3: pack: invalid UTF-8 byte 0xfe"},
		{"line too long", strings.Repeat("a", MaxRequest+1), "p:1: pack: line longer than 1048576 bytes"},
		{"command too long", strings.Repeat("a", MaxRequest), "p:1:1: command: the command is longer than 1048576 bytes"},
		{"too many lines", strings.Repeat("\n", MaxPackLines) + "a", "p:100001: pack: more than 100000 lines"},
		{"too many jobs", "# c\n" + strings.Repeat("a\n", MaxJobs+1), "p:1002: pack: more than 1000 jobs: one submission takes at most 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := ParsePack("p", []byte(tc.text))
			if jobs != nil {
				t.Fatalf("jobs %v returned", jobs)
			}
			checkErr(t, "ParsePack", err, tc.want)
		})
	}
	_, err := ParsePack("p", make([]byte, MaxPackSize+1))
	checkErr(t, "too large", err, "p: pack: larger than 67108864 bytes")
}

// TestPackLimits: a file at the line limit is fine, and so is one of
// MaxJobs jobs.
func TestPackLimits(t *testing.T) {
	jobs, err := ParsePack("p", []byte(strings.Repeat("\n", MaxPackLines-1)+"a\n"))
	if err != nil || len(jobs) != 1 || jobs[0].Command[0] != "a" {
		t.Fatalf("jobs %v, err %v", jobs, err)
	}
	if jobs, err = ParsePack("p", []byte(strings.Repeat("a\n", MaxJobs))); err != nil || len(jobs) != MaxJobs {
		t.Fatalf("%d jobs, err %v", len(jobs), err)
	}
}

// TestPackFile: -pack reads its file through Open.
func TestPackFile(t *testing.T) {
	fsys := fstest.MapFS{"p": {Data: []byte("a\n-n x b\n")}}
	_, err := Parse([]string{"--json", "-pack", "p"}, Input{Open: files(fsys).Open, CallerFlags: []string{"--json"}})
	checkErr(t, "bad line", err, `p:2:4: -n: expected min[,max] task counts, whole numbers, in "x"`)
	_, err = Parse([]string{"-pack", "nope"}, files(fsys))
	checkErr(t, "missing", err, `argument 2: -pack: cannot open "nope": open nope: file does not exist`)
	big := Input{Open: func(string) (io.ReadCloser, error) { return io.NopCloser(zeros{}), nil }}
	_, err = Parse([]string{"-pack", "big"}, big)
	checkErr(t, "big", err, `argument 2: -pack: "big" is larger than 67108864 bytes`)
	fsys["p"] = &fstest.MapFile{Data: []byte("a\n")}
	s, err := Parse([]string{"--json", "-pack", "p", "--json"}, Input{Open: files(fsys).Open, CallerFlags: []string{"--json"}})
	if err != nil || len(s.Jobs) != 1 || len(s.Flags) != 2 || s.Pack != "p" {
		t.Fatalf("submission %+v, err %v", s, err)
	}
}

// genText draws a non-empty value of printable characters and spaces,
// quotes and shell characters included.
func genText(t *rapid.T, label string) string {
	return rapid.StringOfN(rapid.SampledFrom([]rune(" a'\"\\#$é-[]%:;*~`")), 1, 20, -1).Draw(t, label)
}

// genName draws a -J value that is not a job array: genText without '[',
// ']' and '%' (arrays are TestOptions' and jobarray's).
func genName(t *rapid.T, label string) string {
	return rapid.StringOfN(rapid.SampledFrom([]rune(" a'\"\\#$é-:;*~`")), 1, 20, -1).Draw(t, label)
}

// TestPackRoundTrip: a job written as a pack line, options in any order
// and values quoted by Quote, parses back to the job.
func TestPackRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := event.Submit{TasksMin: 1, TasksMax: 1}
		var opts [][]string
		add := func(w ...string) { opts = append(opts, w) }
		if rapid.Bool().Draw(t, "n") {
			lo := rapid.IntRange(1, MaxTasks).Draw(t, "lo")
			hi := rapid.IntRange(lo, MaxTasks).Draw(t, "hi")
			want.TasksMin, want.TasksMax = lo, hi
			if lo == hi && rapid.Bool().Draw(t, "one") {
				add("-n", fmt.Sprint(lo))
			} else {
				add("-n", fmt.Sprintf("%d,%d", lo, hi))
			}
		}
		if rapid.Bool().Draw(t, "W") {
			m := rapid.IntRange(1, MaxRunMinutes).Draw(t, "minutes")
			want.Estimate = int64(m) * 60
			if rapid.Bool().Draw(t, "hours") {
				add("-W", fmt.Sprintf("%d:%02d", m/60, m%60))
			} else {
				add("-W", fmt.Sprint(m))
			}
		}
		for _, o := range []struct {
			name string
			dst  *string
			gen  func(*rapid.T, string) string
		}{
			{"-q", &want.Queue, func(t *rapid.T, l string) string { return rapid.StringMatching(`[A-Za-z0-9_.\-]{1,20}`).Draw(t, l) }},
			{"-P", &want.Project, func(t *rapid.T, l string) string {
				return rapid.StringMatching(`[A-Za-z0-9_.'"\\#\-]{1,20}`).Draw(t, l)
			}},
			{"-J", &want.Name, genName},
			{"-o", &want.Stdout, genText},
			{"-e", &want.Stderr, genText},
			{"-R", &want.ResReq, func(t *rapid.T, l string) string {
				return rapid.SampledFrom([]string{"select[mem > 1]", "rusage[mem=10] span[hosts=1]", "order[-slots]", "same[type]", "type == 'X 1'"}).Draw(t, l)
			}},
		} {
			if rapid.Bool().Draw(t, o.name) {
				*o.dst = o.gen(t, o.name)
				add(o.name, *o.dst)
			}
		}
		if rapid.Bool().Draw(t, "r") {
			want.Rerunnable = true
			add("-r")
		}
		n := rapid.IntRange(1, 4).Draw(t, "words")
		for i := range n {
			w := rapid.StringOfN(rapid.SampledFrom([]rune(" \t'\"\\#$`\rab-é")), max(1-i, 0), 10, -1).Draw(t, "word")
			want.Command = append(want.Command, w)
		}
		perm := rapid.Permutation(opts).Draw(t, "order")
		var words []string
		for _, o := range perm {
			words = append(words, o...)
		}
		if strings.HasPrefix(want.Command[0], "-") || rapid.Bool().Draw(t, "dashdash") {
			words = append(words, "--")
		}
		line := Join(append(words, want.Command...))
		jobs, err := ParsePack("p", []byte(line+"\n"))
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if got := jobs[0].Submit(); len(jobs) != 1 || !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q:\n got  %+v\n want %+v", line, got, want)
		}
	})
}
