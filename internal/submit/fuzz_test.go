package submit

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xce-sched/xce/gpureq"
	"github.com/xce-sched/xce/resreq"
)

// maxErrText bounds an error's text: its position, its field and its
// message (at most maxMsg bytes).
const maxErrText = maxMsg + 100

// checkFuzzErr: err is a short *Error whose position lies within text,
// a text of lines lines.
func checkFuzzErr(t *testing.T, err error, text string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if n := len(err.Error()); n > maxErrText || len(e.Msg) > maxMsg || !utf8.ValidString(e.Msg) {
		t.Fatalf("error of %d bytes (message %d): %q", n, len(e.Msg), err)
	}
	lines := strings.Count(text, "\n") + 1
	if e.Line < 0 || e.Line > lines || e.Column < 0 || e.Column > len(text)+1 {
		t.Fatalf("error position line %d col %d outside the input (%d lines, %d bytes): %v", e.Line, e.Column, lines, len(text), err)
	}
}

// checkJob: a request has the invariants Parse promises.
func checkJob(t *testing.T, r *Request) {
	t.Helper()
	switch {
	case r.TasksMin < 1 || r.TasksMax < r.TasksMin || r.TasksMax > MaxTasks:
		t.Fatalf("tasks %d,%d", r.TasksMin, r.TasksMax)
	case r.Estimate < 0 || r.Estimate > MaxRunMinutes*60 || r.Estimate%60 != 0:
		t.Fatalf("estimate %d", r.Estimate)
	case r.Req == nil || len(r.ResReq) > MaxResReq:
		t.Fatalf("resreq %q, %v", r.ResReq, r.Req)
	case (r.Command == nil) == (r.Script == ""):
		t.Fatalf("command %q and script %q", r.Command, r.Script)
	}
	if _, err := resreq.Parse(r.ResReq); err != nil {
		t.Fatalf("resreq %q does not parse: %v", r.ResReq, err)
	}
	if r.GPU != "" {
		g, err := gpureq.Parse(r.GPU)
		if err != nil {
			t.Fatalf("-gpu %q does not parse: %v", r.GPU, err)
		}
		if _, err := gpureq.Merge(r.Req, g); err != nil {
			t.Fatalf("-gpu %q does not go with -R %q: %v", r.GPU, r.ResReq, err)
		}
	}
	for _, s := range append([]string{r.Name, r.Queue, r.Project, r.Stdout, r.Stderr, r.Script, r.ResReq}, r.Command...) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			t.Fatalf("value %q is not valid UTF-8 without NUL", s)
		}
	}
}

// FuzzScript: a job script on standard input never panics; it fails with
// a short *Error positioned within the script, or gives one job that
// keeps the script whole and has valid fields.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\n#BSUB -n 2 -q short\n#BSUB -J 'my job' # a comment\n\n#BSUB -W 1:00\necho hi\n",
		"#BSUB -R 'select[a]'\n#BSUB -R \"rusage[mem=1]\"\nrun\n",
		"#BSUB -R '2*{a}+4*{b}'\n#BSUB -n 6\nrun",
		"#BSUB -n 2\nrun\n#BSUB -n 3\n",
		"#BSUB -J a\\ b\"c d\"'e' -o o.%J -e e.%J -P p -r -rn\r\nrun\r\n",
		"#BSUB -n x\nrun", "#BSUB -J 'abc\nrun", "#BSUB -n 2 myprog\nrun", "#BSUB -R \"select[mem>1 x\"\nrun",
		"", "\n", "#BSUB", "run\n\xff", "echo \x00", "#BSUB -W 16666:40\nx", "#BSUB -W 1/h\nx",
		"#BSUB -gpu \"num=2:mode=exclusive_process\"\n#BSUB -R 'select[gpu_model==A100]'\nrun\n", "#BSUB -gpu num=2:mps=yes\nrun",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(nil, Input{Stdin: strings.NewReader(text)})
		if err != nil {
			checkFuzzErr(t, err, text)
			return
		}
		if len(s.Jobs) != 1 || s.Jobs[0].Script != text {
			t.Fatalf("%d jobs, script not kept whole", len(s.Jobs))
		}
		checkJob(t, s.Jobs[0])
		for _, w := range s.Jobs[0].Warnings {
			if len(w) > maxErrText+100 {
				t.Fatalf("warning of %d bytes", len(w))
			}
		}
	})
}

// FuzzPackLine: a line never panics Split or ParsePack. Split fails with
// a short *Error at a column within the line, or gives words that Join
// writes back to a line splitting to the same words. ParsePack fails with
// a short *Error, or gives jobs whose commands, written back with Join
// after "--", parse to the same commands.
func FuzzPackLine(f *testing.F) {
	for _, s := range []string{
		"-n 4 -R \"span[hosts=1]\" -J build make -j4 all",
		"-J 'sweep 1' -P proj -r -- -weird-command --flag \"a b\" 'c d'",
		"-R \"2*{select[gpu]} + 6*{rusage[mem=100]}\" ./train.sh --epochs=10 # six more",
		`a'b'"c"d 'it'\''s' "a\"b\\c\$d\x" \ x`, "a 'b", `a "b`, `a\`, "# c", "-n 2", "-n 2 --", "a\nb\n-n x c",
		"-pack f a", "'' a", "a\x00", "\xfe", "-n 3 -R 2*{a} a", "-W 1:2:3 x",
		"-gpu num=1/host -R rusage[mem=1] train", "-gpu - -n 2 -R 1*{}+1*{} x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			checkFuzzErr(t, err, line)
			if e := err.(*Error); e.Column < 1 {
				t.Fatalf("split error without a column: %v", err)
			}
		} else if again, err := Split(Join(words)); err != nil || !slices.Equal(again, words) {
			t.Fatalf("Split(Join(%q)) = %q, %v", words, again, err)
		}
		jobs, err := ParsePack("p", []byte(line))
		if err != nil {
			checkFuzzErr(t, err, line)
			return
		}
		for _, r := range jobs {
			checkJob(t, r)
			back, err := ParsePack("p", []byte("-- "+Join(r.Command)))
			if err != nil || len(back) != 1 || !slices.Equal(back[0].Command, r.Command) {
				t.Fatalf("command %q written back as %q: %v", r.Command, "-- "+Join(r.Command), err)
			}
		}
	})
}
