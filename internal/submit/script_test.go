package submit

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/xce-sched/xce/internal/event"
)

// stdin parses args with text on standard input.
func stdin(args []string, text string) (*Submission, error) {
	return Parse(args, Input{Stdin: strings.NewReader(text)})
}

// files returns an Input whose Open reads fsys.
func files(fsys fs.FS) Input {
	return Input{Open: func(name string) (io.ReadCloser, error) { return fsys.Open(name) }}
}

// TestScriptOptions: #BSUB lines read from a script on standard input, by
// hand; the script is kept whole.
func TestScriptOptions(t *testing.T) {
	base := event.Submit{TasksMin: 1, TasksMax: 1}
	with := func(f func(*event.Submit)) event.Submit {
		s := base
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name, text string
		want       event.Submit
		warning    string
	}{
		{"basic", "#!/bin/sh\n#BSUB -n 2 -q short\n#BSUB -J 'my job' # a comment\n\n# plain comment\n#BSUB -W 1:00\necho hi\n",
			with(func(s *event.Submit) {
				s.TasksMin, s.TasksMax, s.Queue, s.Name, s.Estimate = 2, 2, "short", "my job", 3600
			}), ""},
		{"command only", "run", base, ""},
		{"indented #BSUB", "  \t#BSUB -r\nrun\n", with(func(s *event.Submit) { s.Rerunnable = true }), ""},
		{"#BSUB followed by a tab", "#BSUB\t-q\ta\nrun\n", with(func(s *event.Submit) { s.Queue = "a" }), ""},
		{"CRLF line ends", "#BSUB -q a\r\nrun\r\n", with(func(s *event.Submit) { s.Queue = "a" }), ""},
		{"#BSUB alone", "#BSUB\nrun\n", base, ""},
		{"not #BSUB lines", "#BSUBX -n 2\n#bsub -n 3\n# BSUB -n 4\n##BSUB -n 5\nrun\n", base, ""},
		{"last value wins", "#BSUB -q a\n#BSUB -q b -W 5\n#BSUB -W 6\nrun\n",
			with(func(s *event.Submit) { s.Queue, s.Estimate = "b", 360 }), ""},
		{"-R merged across lines", "#BSUB -R 'select[a]'\n#BSUB -R \"rusage[mem=1]\"\nrun\n",
			with(func(s *event.Submit) { s.ResReq = "select[a] rusage[mem=1]" }), ""},
		{"quoting in #BSUB lines", `#BSUB -J a\ b"c d"'e'` + "\nrun\n", with(func(s *event.Submit) { s.Name = "a bc de" }), ""},
		{"no final newline", "#BSUB -n 2\nrun", with(func(s *event.Submit) { s.TasksMin, s.TasksMax = 2, 2 }), ""},
		{"late #BSUB not read", "#BSUB -n 2\nrun\n#BSUB -n 3\n",
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax = 2, 2 }),
			"standard input:3: #BSUB line after the script's first command not read (#BSUB lines must come before it)"},
		{"late #BSUB lines counted", "run\ncat <<EOF\n#BSUB -n 3\n#BSUB -q x\n  #BSUB\nEOF\n", base,
			"standard input:3: #BSUB line after the script's first command not read (#BSUB lines must come before it); 2 more such lines"},
		{"two late #BSUB lines", "run\n#BSUB -n 3\n#BSUB -q x\n", base,
			"standard input:2: #BSUB line after the script's first command not read (#BSUB lines must come before it); 1 more such line"},
		{"late bad #BSUB not checked", "run\n#BSUB -n x 'y\n", base,
			"standard input:2: #BSUB line after the script's first command not read (#BSUB lines must come before it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stdin(nil, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			r := s.Jobs[0]
			want := tc.want
			want.Script = tc.text
			if got := r.Submit(); !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got  %+v\n want %+v", got, want)
			}
			var warnings []string
			if tc.warning != "" {
				warnings = []string{tc.warning}
			}
			if !reflect.DeepEqual(r.Warnings, warnings) {
				t.Fatalf("warnings %q, want %q", r.Warnings, warnings)
			}
		})
	}
}

// TestScriptPrecedence: an option of the command line replaces the
// script's, option by option; -R replaces every -R of the script.
func TestScriptPrecedence(t *testing.T) {
	script := "#BSUB -n 2 -q a -R select[a] -R rusage[mem=1] -W 10 -r\n#BSUB -J s -o so -e se -P sp\nrun\n"
	fromScript := event.Submit{TasksMin: 2, TasksMax: 2, Queue: "a", ResReq: "select[a] rusage[mem=1]", Estimate: 600,
		Rerunnable: true, Name: "s", Stdout: "so", Stderr: "se", Project: "sp", Script: script}
	with := func(f func(*event.Submit)) event.Submit {
		s := fromScript
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		args []string
		want event.Submit
	}{
		{"nothing given", nil, fromScript},
		{"-n", []string{"-n", "4,8"}, with(func(s *event.Submit) { s.TasksMin, s.TasksMax = 4, 8 })},
		{"-q", []string{"-q", "b"}, with(func(s *event.Submit) { s.Queue = "b" })},
		{"-R replaces all", []string{"-R", "select[b]"}, with(func(s *event.Submit) { s.ResReq = "select[b]" })},
		{"-R blank clears", []string{"-R", ""}, with(func(s *event.Submit) { s.ResReq = "" })},
		{"-W", []string{"-W", "1:00"}, with(func(s *event.Submit) { s.Estimate = 3600 })},
		{"-rn", []string{"-rn"}, with(func(s *event.Submit) { s.Rerunnable = false })},
		{"-J -o -e -P", []string{"-J", "c", "-o", "co", "-e", "ce", "-P", "cp"},
			with(func(s *event.Submit) { s.Name, s.Stdout, s.Stderr, s.Project = "c", "co", "ce", "cp" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stdin(tc.args, script)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Jobs[0].Submit(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("\n got  %+v\n want %+v", got, tc.want)
			}
		})
	}
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// TestScriptErrors: every error of a script, by its exact text.
func TestScriptErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		text string
		want string
	}{
		{"bad value", nil, "#!/bin/sh\n#BSUB -n x\nrun\n", `standard input:2:10: -n: expected min[,max] task counts, whole numbers, in "x"`},
		{"unknown option", nil, "#BSUB -y\nrun", `standard input:1:7: unknown option "-y"`},
		{"LSF option", nil, "#BSUB -U\nrun", "standard input:1:7: -U: LSF's bsub option -U is not supported by xce"},
		{"caller flag", nil, "#BSUB --json\nrun", `standard input:1:7: unknown option "--json"`},
		{"unterminated quote", nil, "#BSUB -J 'abc\nrun", "standard input:1:10: #BSUB: unterminated single quote"},
		{"command word", nil, "#BSUB -n 2 myprog\nrun", `standard input:1:12: #BSUB: a #BSUB line holds options only, not the word "myprog"`},
		{"dash dash", nil, "#BSUB --\nrun", `standard input:1:7: #BSUB: a #BSUB line holds options only, not "--" or a command`},
		{"-pack", nil, "#BSUB -pack f\nrun", "standard input:1:7: -pack: only the command line may name a pack file"},
		{"missing value", nil, "#BSUB -n\nrun", "standard input:1:9: -n: needs a value"},
		{"missing value before comment", nil, "#BSUB -q # queue\nrun", "standard input:1:9: -q: needs a value"},
		{"-R column in quotes", nil, "#BSUB -R \"select[mem>1 x\"\nrun", "standard input:1:24: -R: expected ']' after select expression"},
		{"-R column through escapes", nil, `#BSUB -R select\[a\]\ x` + "\nrun", `standard input:1:23: -R: unknown section "x"`},
		{"-R end of input", nil, "#BSUB -R 'select[a'\nrun", "standard input:1:20: -R: expected ']' after select expression"},
		{"whole-word error at the word", nil, "#BSUB -W   '0'\nrun", `standard input:1:12: -W: a run limit must be at least 1 minute, got "0"`},
		{"no command", nil, "#!/bin/sh\n#BSUB -n 2\n\n# c\n", "standard input: script: the script holds no command, only blank lines, comments and #BSUB lines"},
		{"empty", nil, "", "standard input: script: the script holds no command, only blank lines, comments and #BSUB lines"},
		{"blank lines only", nil, " \n\t\n\r\n", "standard input: script: the script holds no command, only blank lines, comments and #BSUB lines"},
		{"NUL", nil, "#BSUB -n 2\necho \x00\n", "standard input:2:6: script: NUL byte; a job script must be text"},
		{"invalid UTF-8", nil, "run\n\xff", "standard input:2:1: script: invalid UTF-8 byte 0xff; a job script must be text"},
		{"too large", nil, strings.Repeat("a", MaxRequest+1), "standard input: script: the script is larger than 1048576 bytes"},
		{"bad #BSUB under a command-line option", []string{"-n", "4"}, "#BSUB -n x\nrun", `standard input:1:10: -n: expected min[,max] task counts, whole numbers, in "x"`},
		{"-n against a script's compound -R", []string{"-n", "5"}, "#BSUB -R '2*{a}+4*{b}'\nrun", "argument 2: -n: 5 tasks, but the compound -R's terms ask for 6"},
		{"script -n against a compound -R", []string{"-R", "2*{a}+4*{b}"}, "#BSUB -n 5\nrun", "standard input:1:10: -n: 5 tasks, but the compound -R's terms ask for 6"},
		{"script -R merge error", nil, "#BSUB -R span[hosts=1]\n#BSUB -R span[ptile=1]\nrun", "standard input:2:10: -R: span[] is also in an earlier -R"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stdin(tc.args, tc.text)
			if err == nil {
				t.Fatalf("no error, jobs %+v", s.Jobs)
			}
			checkErr(t, "Parse", err, tc.want)
		})
	}
	_, err := Parse(nil, Input{Stdin: errReader{}})
	checkErr(t, "read error", err, "standard input: script: read: boom")
}

// TestScriptWithLimitSize: a script of exactly MaxRequest bytes is read.
func TestScriptWithLimitSize(t *testing.T) {
	text := "run\n" + strings.Repeat("#", MaxRequest-4)
	s, err := stdin(nil, text)
	if err != nil || len(s.Jobs[0].Script) != MaxRequest {
		t.Fatalf("err %v", err)
	}
}

// closeErr is a file whose Close fails.
type closeErr struct{ io.Reader }

func (closeErr) Close() error { return errors.New("boom") }

// TestScriptFile: a script named on the command line, read through Open.
func TestScriptFile(t *testing.T) {
	fsys := fstest.MapFS{
		"job.sh": {Data: []byte("#!/bin/sh\n#BSUB -n 3\n#BSUB -q\nrun\n")},
		"ok.sh":  {Data: []byte("#BSUB -n 3\nrun\n")},
		"big.sh": {Data: []byte(strings.Repeat("a", MaxRequest+1))},
	}
	s, err := Parse([]string{"-q", "q", "ok.sh"}, files(fsys))
	if err != nil {
		t.Fatal(err)
	}
	want := event.Submit{TasksMin: 3, TasksMax: 3, Queue: "q", Script: "#BSUB -n 3\nrun\n"}
	if got := s.Jobs[0].Submit(); !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got  %+v\n want %+v", got, want)
	}
	_, err = Parse([]string{"job.sh"}, files(fsys))
	checkErr(t, "bad script", err, "job.sh:3:9: -q: needs a value")
	_, err = Parse([]string{"big.sh"}, files(fsys))
	checkErr(t, "big script", err, `argument 1: script: "big.sh" is larger than 1048576 bytes`)
	_, err = Parse([]string{"-n", "2", "nope.sh"}, files(fsys))
	checkErr(t, "missing script", err, `argument 3: script: cannot open "nope.sh": open nope.sh: file does not exist`)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v does not wrap fs.ErrNotExist", err)
	}
	in := Input{Open: func(string) (io.ReadCloser, error) { return closeErr{strings.NewReader("run")}, nil }}
	_, err = Parse([]string{"x"}, in)
	checkErr(t, "close error", err, `argument 1: script: cannot read "x": close: boom`)
	in = Input{Open: func(string) (io.ReadCloser, error) { return io.NopCloser(errReader{}), nil }}
	_, err = Parse([]string{"x"}, in)
	checkErr(t, "read error", err, `argument 1: script: cannot read "x": read: boom`)
}

// golden is a golden file's expectation: the arguments before the
// script's name, then the event and the warnings (the event's Script is
// the script file, whole).
type golden struct {
	Args     []string     `json:"args"`
	Submit   event.Submit `json:"submit"`
	Warnings []string     `json:"warnings"`
}

// TestScriptGolden: each testdata/script/NAME.sh, submitted with the
// arguments of NAME.json, gives NAME.json's event (written by hand).
func TestScriptGolden(t *testing.T) {
	scripts, err := filepath.Glob("testdata/script/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range scripts {
		t.Run(filepath.Base(path), func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(strings.TrimSuffix(path, ".sh") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			s, err := Parse(append(g.Args, path), Input{Open: func(name string) (io.ReadCloser, error) { return os.Open(name) }})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Jobs[0]
			want := g.Submit
			want.Script = string(text)
			if got := r.Submit(); !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got  %+v\n want %+v", got, want)
			}
			if !reflect.DeepEqual(r.Warnings, g.Warnings) {
				t.Fatalf("warnings %q, want %q", r.Warnings, g.Warnings)
			}
		})
	}
}
