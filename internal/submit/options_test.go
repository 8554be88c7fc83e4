package submit

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/internal/event"
)

// one parses args (then "--", "prog") and returns the one job's event.
func one(t *testing.T, args []string) event.Submit {
	t.Helper()
	s, err := Parse(append(args, "--", "prog"), Input{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	if len(s.Jobs) != 1 {
		t.Fatalf("Parse(%q): %d jobs", args, len(s.Jobs))
	}
	return s.Jobs[0].Submit()
}

// TestOptions: every option of the command line, with the event fields
// it gives (by hand); fields not named are those of a bare `-- prog`.
func TestOptions(t *testing.T) {
	base := event.Submit{TasksMin: 1, TasksMax: 1, Command: []string{"prog"}}
	with := func(f func(*event.Submit)) event.Submit {
		s := base
		f(&s)
		return s
	}
	tasks := func(lo, hi int) event.Submit {
		return with(func(s *event.Submit) { s.TasksMin, s.TasksMax = lo, hi })
	}
	minutes := func(m int64) event.Submit {
		return with(func(s *event.Submit) { s.Estimate = m * 60 })
	}
	resreq := func(r string) event.Submit {
		return with(func(s *event.Submit) { s.ResReq = r })
	}
	for _, tc := range []struct {
		name string
		args []string
		want event.Submit
	}{
		{"no option", nil, base},
		{"-n min", []string{"-n", "4"}, tasks(4, 4)},
		{"-n min,max", []string{"-n", "4,6"}, tasks(4, 6)},
		{"-n min,min", []string{"-n", "3,3"}, tasks(3, 3)},
		{"-n leading zeros", []string{"-n", "007,08"}, tasks(7, 8)},
		{"-n largest", []string{"-n", "10000000"}, tasks(MaxTasks, MaxTasks)},
		{"-W minutes", []string{"-W", "90"}, minutes(90)},
		{"-W hours:minutes", []string{"-W", "1:30"}, minutes(90)},
		{"-W zero hours", []string{"-W", "0:1"}, minutes(1)},
		{"-W minutes over 59 after hours", []string{"-W", "2:90"}, minutes(210)},
		{"-W largest in minutes", []string{"-W", "1000000"}, minutes(MaxRunMinutes)},
		{"-W largest in hours", []string{"-W", "16666:40"}, minutes(MaxRunMinutes)},
		{"-J plain", []string{"-J", "build"}, with(func(s *event.Submit) { s.Name = "build" })},
		{"-J a job array", []string{"-J", "arr[1-10:2]%5"}, with(func(s *event.Submit) { s.Name, s.Array = "arr", "1-10:2%5" })},
		{"-w a dependency", []string{"-w", "done(1) && exit(2, >0)"}, with(func(s *event.Submit) { s.Depend = "done(1) && exit(2, >0)" })},
		{"-x exclusive", []string{"-x"}, with(func(s *event.Submit) { s.Exclusive = true })},
		{"-gpu as written", []string{"-gpu", "num=2:mode=exclusive_process"}, with(func(s *event.Submit) { s.GPU = "num=2:mode=exclusive_process" })},
		{"-gpu default", []string{"-gpu", "-"}, with(func(s *event.Submit) { s.GPU = "-" })},
		{"-gpu with -R", []string{"-gpu", "num=1", "-R", "select[gpu_model == A100]"}, with(func(s *event.Submit) {
			s.GPU, s.ResReq = "num=1", "select[gpu_model == A100]"
		})},
		{"-J with spaces", []string{"-J", "my job"}, with(func(s *event.Submit) { s.Name = "my job" })},
		{"-J value starting with a dash", []string{"-J", "-x"}, with(func(s *event.Submit) { s.Name = "-x" })},
		{"-o and -e keep %J %I", []string{"-o", "out.%J", "-e", "err.%J.%I"},
			with(func(s *event.Submit) { s.Stdout, s.Stderr = "out.%J", "err.%J.%I" })},
		{"-q and -P", []string{"-q", "normal", "-P", "proj.1"}, with(func(s *event.Submit) { s.Queue, s.Project = "normal", "proj.1" })},
		{"-q last wins", []string{"-q", "a", "-q", "b"}, with(func(s *event.Submit) { s.Queue = "b" })},
		{"-n last wins", []string{"-n", "2", "-n", "3,5"}, tasks(3, 5)},
		{"-r", []string{"-r"}, with(func(s *event.Submit) { s.Rerunnable = true })},
		{"-r then -rn", []string{"-r", "-rn"}, base},
		{"-rn then -r", []string{"-rn", "-r"}, with(func(s *event.Submit) { s.Rerunnable = true })},
		{"-R kept as written", []string{"-R", "select[mem>1000]  order[-slots]"}, resreq("select[mem>1000]  order[-slots]")},
		{"-R blank is no requirement", []string{"-R", " \t"}, base},
		{"-R blank ones skipped", []string{"-R", "", "-R", "mem > 1", "-R", " "}, resreq("mem > 1")},
		{"-R merged", []string{"-R", "select[a] order[x]", "-R", "rusage[mem=1] span[hosts=1]", "-R", "b || c same[t]", "-R", "rusage[lic=2] order[-y]"},
			resreq("select[a && (b || c)] order[x:-y] rusage[mem=1:lic=2] span[hosts=1] same[t]")},
		{"-R compound gives the task count", []string{"-R", "2*{select[gpu]} + 3*{rusage[mem=1]}"},
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax, s.ResReq = 5, 5, "2*{select[gpu]} + 3*{rusage[mem=1]}" })},
		{"-R compound matching -n", []string{"-n", "5", "-R", "2*{a} + 3*{b}"},
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax, s.ResReq = 5, 5, "2*{a} + 3*{b}" })},
		{"-R compound with open last term", []string{"-R", "2*{a} + {b}", "-n", "8"},
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax, s.ResReq = 8, 8, "2*{a} + {b}" })},
		{"-R simple and compound alternatives", []string{"-R", "{a} || {2*{b}}"},
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax, s.ResReq = 2, 2, "{a} || {2*{b}}" })},
		{"-R simple alternatives take -n", []string{"-n", "2,4", "-R", "{a} || {b}"},
			with(func(s *event.Submit) { s.TasksMin, s.TasksMax, s.ResReq = 2, 4, "{a} || {b}" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := one(t, tc.args); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q)\n got  %+v\n want %+v", tc.args, got, tc.want)
			}
		})
	}
}

// TestCommand: the command after "--" is taken whole, options and caller
// flags included; caller flags before it are reported.
func TestCommand(t *testing.T) {
	s, err := Parse([]string{"--json", "-n", "2", "--json", "--", "-x", "--json", "-n", "", "a b"}, Input{CallerFlags: []string{"--json", "-h"}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Jobs[0]
	if want := []string{"-x", "--json", "-n", "", "a b"}; !reflect.DeepEqual(r.Command, want) || r.Script != "" {
		t.Fatalf("Command %q, Script %q; want %q", r.Command, r.Script, want)
	}
	if want := []string{"--json", "--json"}; !reflect.DeepEqual(s.Flags, want) || s.Pack != "" {
		t.Fatalf("Flags %q, Pack %q", s.Flags, s.Pack)
	}
	if r.TasksMin != 2 || r.Req == nil || r.ResReq != "" {
		t.Fatalf("request %+v", r)
	}
}

// TestSubmitEvent: Submit fills every field it owns and copies Command.
func TestSubmitEvent(t *testing.T) {
	r := &Request{Name: "n", Queue: "q", Project: "p", TasksMin: 2, TasksMax: 3, ResReq: "mem > 1",
		Estimate: 60, Stdout: "o", Stderr: "e", Rerunnable: true, Command: []string{"a", "b"}, Script: "s"}
	got := r.Submit()
	want := event.Submit{Name: "n", Queue: "q", Project: "p", TasksMin: 2, TasksMax: 3, ResReq: "mem > 1",
		Estimate: 60, Stdout: "o", Stderr: "e", Rerunnable: true, Command: []string{"a", "b"}, Script: "s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Submit() = %+v, want %+v", got, want)
	}
	got.Command[0] = "x"
	if r.Command[0] != "a" {
		t.Fatal("Submit shares Command with the request")
	}
}

// checkErr checks that err is an *Error with text want.
func checkErr(t *testing.T, what string, err error, want string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T), want an *Error %q", what, err, err, want)
	}
	if err.Error() != want {
		t.Fatalf("%s:\n got  %q\n want %q", what, err.Error(), want)
	}
	return e
}

// TestOptionErrors: every error of the command line, by its exact text.
func TestOptionErrors(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	manyR := []string{}
	for range MaxResReqCount + 1 {
		manyR = append(manyR, "-R", "a")
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing value", []string{"-n"}, "argument 1: -n: needs a value"},
		{"-n empty", []string{"-n", "", "--", "p"}, `argument 2, col 1: -n: expected min[,max] task counts, whole numbers, in ""`},
		{"-n not a number", []string{"-n", "4x", "--", "p"}, `argument 2, col 2: -n: expected min[,max] task counts, whole numbers, in "4x"`},
		{"-n negative", []string{"-n", "-4", "--", "p"}, `argument 2, col 1: -n: expected min[,max] task counts, whole numbers, in "-4"`},
		{"-n leading space", []string{"-n", " 4", "--", "p"}, `argument 2, col 1: -n: expected min[,max] task counts, whole numbers, in " 4"`},
		{"-n missing max", []string{"-n", "4,", "--", "p"}, `argument 2, col 3: -n: expected min[,max] task counts, whole numbers, in "4,"`},
		{"-n three counts", []string{"-n", "4,6,8", "--", "p"}, `argument 2, col 4: -n: expected min[,max] task counts, whole numbers, in "4,6,8"`},
		{"-n zero", []string{"-n", "0", "--", "p"}, `argument 2, col 1: -n: a task count must be at least 1, got "0"`},
		{"-n zero max", []string{"-n", "4,0", "--", "p"}, `argument 2, col 3: -n: a task count must be at least 1, got "0"`},
		{"-n too large", []string{"-n", "10000001", "--", "p"}, `argument 2, col 1: -n: a task count must be at most 10000000, got "10000001"`},
		{"-n overflow", []string{"-n", "1,99999999999999999999", "--", "p"}, `argument 2, col 3: -n: a task count must be at most 10000000, got "99999999999999999999"`},
		{"-n max below min", []string{"-n", "6,4", "--", "p"}, "argument 2, col 3: -n: max 4 is less than min 6"},
		{"-W empty", []string{"-W", "", "--", "p"}, `argument 2, col 1: -W: expected [hours:]minutes, whole numbers, in ""`},
		{"-W zero", []string{"-W", "0", "--", "p"}, `argument 2: -W: a run limit must be at least 1 minute, got "0"`},
		{"-W zero hours and minutes", []string{"-W", "0:00", "--", "p"}, `argument 2: -W: a run limit must be at least 1 minute, got "0:00"`},
		{"-W too large", []string{"-W", "1000001", "--", "p"}, `argument 2: -W: a run limit must be at most 1000000 minutes, got "1000001"`},
		{"-W too large in hours", []string{"-W", "16666:41", "--", "p"}, `argument 2: -W: a run limit must be at most 1000000 minutes, got "16666:41"`},
		{"-W huge hours", []string{"-W", "99999999999999999999:0", "--", "p"}, `argument 2: -W: a run limit must be at most 1000000 minutes, got "99999999999999999999:0"`},
		{"-W seconds", []string{"-W", "1:2:3", "--", "p"}, `argument 2, col 4: -W: expected [hours:]minutes, whole numbers, in "1:2:3"`},
		{"-W fraction", []string{"-W", "1.5", "--", "p"}, `argument 2, col 2: -W: expected [hours:]minutes, whole numbers, in "1.5"`},
		{"-W no hours", []string{"-W", ":30", "--", "p"}, `argument 2, col 1: -W: expected [hours:]minutes, whole numbers, in ":30"`},
		{"-W no minutes", []string{"-W", "1:", "--", "p"}, `argument 2, col 3: -W: expected [hours:]minutes, whole numbers, in "1:"`},
		{"-W host normalization", []string{"-W", "10/hostA", "--", "p"}, `argument 2, col 3: -W: "/hostA": normalizing the run limit to a host or model is not supported`},
		{"-R syntax", []string{"-R", "select[mem>1", "--", "p"}, "argument 2, col 13: -R: expected ']' after select expression"},
		{"-R invalid UTF-8", []string{"-R", "a\xff", "--", "p"}, "argument 2, col 2: -R: invalid UTF-8 byte 0xff"},
		{"-R too long", []string{"-R", long(MaxResReq + 1), "--", "p"}, "argument 2: -R: longer than 4096 bytes"},
		{"-R too many", append(manyR, "--", "p"), "argument 130: -R: more than 64 -R options"},
		{"-R merged too long", []string{"-R", orderReq("a", 2500), "-R", orderReq("b", 2500), "--", "p"}, "argument 4: -R: the merged requirement is longer than 4096 bytes"},
		{"-R compound with another", []string{"-R", "a", "-R", "2*{b}", "--", "p"}, "argument 4: -R: a compound or alternative requirement must be the job's only -R"},
		{"-R alternatives with another", []string{"-R", "{b} || {c}", "-R", "a", "--", "p"}, "argument 2: -R: a compound or alternative requirement must be the job's only -R"},
		{"-R order key twice", []string{"-R", "order[x]", "-R", "order[-x]", "--", "p"}, `argument 4: -R: order key "x" is also in an earlier -R`},
		{"-R rusage twice", []string{"-R", "rusage[mem=1]", "-R", "rusage[mem=2]", "--", "p"}, `argument 4: -R: rusage resource "mem" is also in an earlier -R`},
		{"-R same twice", []string{"-R", "same[t]", "-R", "same[t]", "--", "p"}, `argument 4: -R: same attribute "t" is also in an earlier -R`},
		{"-R span twice", []string{"-R", "span[hosts=1]", "-R", "a", "-R", "span[ptile=2]", "--", "p"}, "argument 6: -R: span[] is also in an earlier -R"},
		{"-n range with compound", []string{"-n", "4,6", "-R", "2*{a}+4*{b}", "--", "p"}, "argument 2: -n: a compound -R needs a fixed task count, not 4,6"},
		{"-n against compound", []string{"-n", "5", "-R", "2*{a}+4*{b}", "--", "p"}, "argument 2: -n: 5 tasks, but the compound -R's terms ask for 6"},
		{"-n leaves nothing for the last term", []string{"-n", "2", "-R", "2*{a}+{b}", "--", "p"}, "argument 2: -n: the compound -R's terms take 2 tasks, leaving none of 2 for its last term"},
		{"open compound without -n", []string{"-R", "2*{a}+{b}", "--", "p"}, "argument 2: -R: a compound requirement whose last term omits its count needs -n"},
		{"compound alternatives disagree", []string{"-R", "{2*{a}} || {3*{b}}", "--", "p"}, "argument 2: -R: compound alternatives ask for 2 and 3 tasks; one -n cannot match both"},
		{"compound too many tasks", []string{"-R", "10000001*{a}", "--", "p"}, "argument 2: -R: the compound terms ask for 10000001 tasks, more than 10000000"},
		{"-q white space", []string{"-q", "a b", "--", "p"}, `argument 2, col 2: -q: a name may not hold white space: "a b"`},
		{"-q empty", []string{"-q", "", "--", "p"}, "argument 2: -q: must not be empty"},
		{"-q too long", []string{"-q", long(MaxName + 1), "--", "p"}, "argument 2: -q: longer than 255 bytes"},
		{"-P control character", []string{"-P", "a\tb", "--", "p"}, "argument 2, col 2: -P: control or unprintable character U+0009"},
		{"-J empty", []string{"-J", "", "--", "p"}, "argument 2: -J: must not be empty"},
		{"-J too long", []string{"-J", long(MaxJobName + 1), "--", "p"}, "argument 2: -J: longer than 4094 bytes"},
		{"-J NUL", []string{"-J", "a\x00", "--", "p"}, "argument 2, col 2: -J: NUL byte"},
		{"-J invalid UTF-8", []string{"-J", "ab\xc3", "--", "p"}, "argument 2, col 3: -J: invalid UTF-8 byte 0xc3"},
		{"-J bad array index", []string{"-J", "arr[1-3,x]", "--", "p"}, "argument 2, col 9: -J: expected a digit, got 'x'"},
		{"-w bad dependency", []string{"-w", "done(1) ||", "--", "p"}, "argument 2, col 11: -w: expected a condition (done, exit, ended, started) or a job"},
		{"-gpu bad mode", []string{"-gpu", "num=2:mode=excl", "--", "p"}, `argument 2, col 12: -gpu: mode must be shared or exclusive_process, got "excl"`},
		{"-gpu j_exclusive=no", []string{"-gpu", "j_exclusive=no", "--", "p"}, "argument 2, col 13: -gpu: j_exclusive=no is not supported: xce never gives a device to two jobs at once (docs/gpus.md)"},
		{"-gpu gmodel", []string{"-gpu", "num=1:gmodel=A100", "--", "p"}, `argument 2, col 7: -gpu: LSF's gmodel= is not supported by xce: select the hosts with -R "select[gpu_model == NAME]" instead`},
		{"-gpu empty", []string{"-gpu", "", "--", "p"}, "argument 2: -gpu: must not be empty"},
		{"-gpu with a GPU rusage", []string{"-gpu", "num=1", "-R", "rusage[ngpus_physical=2]", "--", "p"}, "argument 2: -gpu: the resource requirement's rusage[] already asks for ngpus_physical: give the number of GPUs once, in rusage[] or in the GPU requirement"},
		{"-gpu with a compound -R", []string{"-n", "2", "-gpu", "-", "-R", "1*{} + 1*{}", "--", "p"}, "argument 4: -gpu: a GPU requirement (gpu, -gpu) goes with a simple resource requirement only: give a compound or alternative one rusage[ngpus_physical=N] in its terms instead"},
		{"-J array too large", []string{"-J", "a[1-1000001]", "--", "p"}, "argument 2, col 3: -J: more than 1000000 elements (the most an array may have)"},
		{"-o empty", []string{"-o", "", "--", "p"}, "argument 2: -o: must not be empty"},
		{"-e newline", []string{"-e", "a\nb", "--", "p"}, "argument 2, col 2: -e: control or unprintable character U+000A"},
		{"-o too long", []string{"-o", long(MaxPath + 1), "--", "p"}, "argument 2: -o: longer than 4096 bytes"},
		{"unknown option", []string{"-y", "--", "p"}, `argument 1: unknown option "-y"`},
		{"unknown long option", []string{"--json", "--", "p"}, `argument 1: unknown option "--json"`},
		{"value attached", []string{"-n4", "--", "p"}, `argument 1: unknown option "-n4" (an option's value is its own word: -n 4)`},
		{"value attached needing quotes", []string{"-Rselect[a]", "--", "p"}, `argument 1: unknown option "-Rselect[a]" (an option's value is its own word: -R 'select[a]')`},
		{"LSF option not supported", []string{"-U", "--", "p"}, "argument 1: -U: LSF's bsub option -U is not supported by xce"},
		{"LSF -oo not supported", []string{"-oo", "f", "--", "p"}, "argument 1: -oo: LSF's bsub option -oo is not supported by xce"},
		{"-- without command", []string{"-n", "2", "--"}, `argument 3: command: "--" must be followed by the command`},
		{"empty command name", []string{"--", "", "x"}, "argument 2: command: the command name is empty"},
		{"command invalid UTF-8", []string{"--", "a", "b\xff"}, "argument 3, col 2: command: invalid UTF-8 byte 0xff"},
		{"command NUL", []string{"--", "a\x00"}, "argument 2, col 2: command: NUL byte"},
		{"command too long", []string{"--", long(MaxRequest)}, "argument 2: command: the command is longer than 1048576 bytes"},
		{"command too long in all", []string{"--", long(MaxRequest / 2), long(MaxRequest / 2)}, "argument 2: command: the command is longer than 1048576 bytes"},
		{"no command and no standard input", nil, `command: no command: give one after "--", or a script, or a script on standard input`},
		{"-pack with an option", []string{"-n", "2", "-pack", "f"}, "argument 4: -pack: takes no other option, script or command: each line of the file has its own"},
		{"-pack with a command", []string{"-pack", "f", "--", "x"}, "argument 2: -pack: takes no other option, script or command: each line of the file has its own"},
		{"-pack with a script", []string{"--pack", "f", "x"}, "argument 2: -pack: takes no other option, script or command: each line of the file has its own"},
		{"-pack empty name", []string{"-pack", ""}, "argument 2: -pack: the pack file name is empty"},
		{"-pack without Open", []string{"-pack", "f"}, `argument 2: -pack: cannot read "f": no files may be read here`},
		{"script without Open", []string{"job.sh"}, `argument 1: script: cannot read "job.sh": no files may be read here`},
		{"argument after the script", []string{"job.sh", "-n", "2"}, `argument 2: unexpected argument "-n" after the script "job.sh": options go before the script, and a command goes after "--"`},
		{"empty script name", []string{""}, "argument 1: script: the script name is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.args, Input{})
			if err == nil {
				t.Fatalf("Parse: no error, jobs %+v", s.Jobs)
			}
			if s != nil {
				t.Fatalf("Parse returned %+v with its error", s)
			}
			checkErr(t, "Parse", err, tc.want)
		})
	}
}

// TestErrorFields: the structured fields behind the text.
func TestErrorFields(t *testing.T) {
	_, err := Parse([]string{"-q", "ok", "-R", "select[mem>1", "--", "p"}, Input{})
	e := checkErr(t, "Parse", err, "argument 4, col 13: -R: expected ']' after select expression")
	want := Error{Arg: 4, Column: 13, Field: "-R", Msg: "expected ']' after select expression"}
	got := *e
	got.Err = nil
	if got != want {
		t.Fatalf("error %+v, want %+v", got, want)
	}
	if e.Err == nil || !strings.HasPrefix(e.Err.Error(), "resreq: col 13:") {
		t.Fatalf("Err = %v, want the resreq error", e.Err)
	}
}

// TestErrorText: Error's format for each kind of position.
func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "job.sh", Line: 3, Column: 10, Field: "-W", Msg: "m"}, "job.sh:3:10: -W: m"},
		{Error{File: "job.sh", Line: 3, Field: "-W", Msg: "m"}, "job.sh:3: -W: m"},
		{Error{Line: 3, Column: 2, Msg: "m"}, "line 3:2: m"},
		{Error{Arg: 4, Column: 7, Field: "-R", Msg: "m"}, "argument 4, col 7: -R: m"},
		{Error{Arg: 4, Field: "-R", Msg: "m"}, "argument 4: -R: m"},
		{Error{Column: 5, Msg: "m"}, "col 5: m"},
		{Error{File: "p.txt", Field: "pack", Msg: "m"}, "p.txt: pack: m"},
		{Error{Field: "command", Msg: "m"}, "command: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
	if got := quote(strings.Repeat("é", 41)); got != `"`+strings.Repeat("é", 40)+`"...` {
		t.Errorf("quote cut: %q", got)
	}
	if got := clipMsg(strings.Repeat("é", 200)); len(got) > maxMsg || !strings.HasSuffix(got, "é...") {
		t.Errorf("clipMsg: %d bytes, %q", len(got), got[len(got)-8:])
	}
}
