package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xce-sched/xce/resreq"
)

// h1 is a one-host cluster: lines 1-2; sections added after it start on
// line 3.
const h1 = "hosts:\n  - {name: a, slots: 1}\n"

// mergeBomb is a "billion laughs" document: each host merges the previous
// one ten times.
var mergeBomb = func() string {
	s := "hosts:\n  - &a0 {name: h, slots: 1, type: x}\n"
	for k := 1; k < 12; k++ {
		s += fmt.Sprintf("  - &a%d {<<: [%s], name: h%d}\n", k, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", k-1), 10), ", "), k)
	}
	return s
}()

// deepIndent nests 200 block mappings, line i indented by i spaces.
var deepIndent = func() string {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	return b.String()
}()

// manyTags has 6000 hosts with a tag each: 6000 × 6006 attribute columns.
var manyTags = func() string {
	var b strings.Builder
	b.WriteString("hosts:\n")
	for i := range 6000 {
		fmt.Fprintf(&b, "  - {name: h%d, slots: 1, tags: [t%d]}\n", i, i)
	}
	return b.String()
}()

// errorCases lists one scenario per error kind with the exact position and
// path of the error, worked out by hand from the YAML (columns are 1-based).
// msg must be a substring of ScenarioError.Msg.
var errorCases = []struct {
	name      string
	in        string
	line, col int
	path      string
	msg       string
}{
	// Encoding and YAML syntax.
	{"syntax: unclosed flow list", "hosts: [\n", 1, 8, "", "YAML: sequence end token ']' not found"},
	{"syntax: bad indentation", "hosts:\n  - name: a\n   slots: 1\n", 3, 4, "", "YAML: value is not allowed in this context"},
	{"bad UTF-8", "hosts:\n  - {name: a\xff, slots: 1}\n", 2, 13, "", "invalid UTF-8 byte 0xff"},
	{"two documents", h1 + "---\nhosts: []\n", 4, 1, "", "more than one YAML document"},
	{"top level is a list", "- a\n", 1, 1, "", "expected a mapping, got a list"},
	{"empty file", "", 0, 0, "hosts", "at least one host is required"},
	{"only a comment", "# nothing\n", 0, 0, "hosts", "at least one host is required"},
	{"empty mapping", "{}", 1, 1, "hosts", "at least one host is required"},
	{"empty host list", "hosts: []\n", 1, 8, "hosts", "at least one host is required"},
	{"unknown top-level field", h1 + "host: x\n", 3, 1, "host", `unknown field "host"`},
	{"undefined alias", "hosts:\n  - {name: a, slots: *n}\n", 2, 22, "hosts[0].slots", "alias *n names no earlier anchor"},
	{"cyclic merge", "hosts:\n  - &h {name: a, slots: 1, <<: *h}\n", 2, 8, "hosts[0]", "merge keys (<<) nested too deeply"},
	{"unsupported tag", "hosts:\n  - {name: a, slots: !foo 1}\n", 2, 22, "hosts[0].slots", `unsupported YAML tag "!foo"`},
	{"non-string key", "hosts:\n  - {name: a, slots: 1, 3: x}\n", 2, 25, "hosts[0]", "mapping keys must be strings, got number 3"},
	{"merge bomb", mergeBomb, 2, 9, "hosts[6]", "aliases and merge keys expand the document too much"},
	{"deep flow nesting", "hosts: " + strings.Repeat("[", 200) + strings.Repeat("]", 200), 1, 107, "", "YAML nested deeper than 100 levels"},
	{"deep block sequence", strings.Repeat("- ", 200) + "x\n", 1, 201, "", "YAML nested deeper than 100 levels"},
	{"deep indentation", deepIndent, 101, 101, "", "YAML nested deeper than 100 levels"},
	{"state too large", manyTags, 2, 3, "hosts", "too large: 6000 hosts × 6006 attribute columns exceed 33554432 values"},
	{"duplicate key", "hosts:\n  - name: a\n    slots: 1\n    slots: 2\n", 4, 5, "hosts[0].slots", `duplicate key "slots" (first at 3:5)`},
	{"NUL byte", "\x00", 1, 1, "", "character U+0000 is not allowed in YAML (control characters other than tab and line breaks)"},
	{"control character in a value", h1 + "jobs:\n  - {id: 1, user: \"a\x07b\"}\n", 4, 21, "", "character U+0007 is not allowed in YAML"},
	{"DEL", "hosts:\x7f\n", 1, 7, "", "character U+007F is not allowed in YAML"},
	{"C1 control", "hosts: \u0086\n", 1, 8, "", "character U+0086 is not allowed in YAML"},
	{"long key quoted short", h1 + strings.Repeat("k", 1000) + ": 1\n", 3, 1, `["` + strings.Repeat("k", 40) + `"...]`,
		`unknown field "` + strings.Repeat("k", 40) + `"... (known fields: hosts, host_groups, user_groups, shared, queues, limits, max_array_size, reservation_usage, jobs)`},
	{"long string quoted short", strings.Repeat("a", 1000), 1, 1, "", `expected a mapping, got string "` + strings.Repeat("a", 40) + `"...`},
	{"long integer quoted short", "hosts:\n  - name: a\n    slots: " + strings.Repeat("9", 100) + "\n", 3, 12, "hosts[0].slots",
		"integer " + strings.Repeat("9", 40) + "... is out of range"},

	// hosts
	{"unknown host field", "hosts:\n  - name: a\n    slots: 1\n    slot: 2\n", 4, 5, "hosts[0].slot", `unknown field "slot" (known fields: name, slots,`},
	{"host not a mapping", "hosts:\n  - a\n", 2, 5, "hosts[0]", `expected a mapping, got string "a"`},
	{"slots wrong type", "hosts:\n  - name: a\n    slots: many\n", 3, 12, "hosts[0].slots", `expected an integer, got string "many"`},
	{"slots quoted", "hosts:\n  - name: a\n    slots: \"4\"\n", 3, 12, "hosts[0].slots", `expected an integer, got string "4"`},
	{"slots zero", "hosts:\n  - name: a\n    slots: 0\n", 3, 12, "hosts[0].slots", "must be >= 1, got 0"},
	{"slots negative", "hosts:\n  - name: a\n    slots: -2\n", 3, 12, "hosts[0].slots", "must be >= 1, got -2"},
	{"slots missing", "hosts:\n  - name: a\n", 2, 5, "hosts[0].slots", "missing required field"},
	{"slots null", "hosts:\n  - name: a\n    slots: null\n", 3, 12, "hosts[0].slots", "required field is null"},
	{"slots float", "hosts:\n  - name: a\n    slots: 2.5\n", 3, 12, "hosts[0].slots", "expected an integer, got number 2.5"},
	{"slots exponent", "hosts:\n  - name: a\n    slots: 1e3\n", 3, 12, "hosts[0].slots", "expected an integer, got number 1e3"},
	{"slots beyond 64 bits", "hosts:\n  - name: a\n    slots: 99999999999999999999\n", 3, 12, "hosts[0].slots", "integer 99999999999999999999 is out of range"},
	{"slots too large", "hosts:\n  - name: a\n    slots: 2000000000\n", 3, 12, "hosts[0].slots", "must be <= 1000000000"},
	{"host name missing", "hosts:\n  - {slots: 1}\n", 2, 5, "hosts[0].name", "missing required field"},
	{"host name not a string", "hosts:\n  - {name: 7, slots: 1}\n", 2, 12, "hosts[0].name", `expected a string, got number 7 (quote it: "7")`},
	{"host name with space", "hosts:\n  - {name: \"a b\", slots: 1}\n", 2, 12, "hosts[0].name", "white space"},
	{"duplicate host name", h1 + "  - {name: a, slots: 2}\n", 3, 12, "hosts[1].name", `duplicate host name "a" (first at hosts[0])`},
	{"resource negative", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: -1}\n", 4, 22, "hosts[0].resources.mem", "must be >= 0, got -1"},
	{"resource infinite", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: .inf}\n", 4, 22, "hosts[0].resources.mem", "must be a finite number"},
	{"resource out of range", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: 1e999}\n", 4, 22, "hosts[0].resources.mem", "number 1e999 is out of range"},
	{"resource wrong type", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: lots}\n", 4, 22, "hosts[0].resources.mem", `expected a number, got string "lots"`},
	{"resource bad name", "hosts:\n  - name: a\n    slots: 1\n    resources: {gpu-mem: 1}\n", 4, 17, `hosts[0].resources.gpu-mem`, "is not a valid name"},
	{"resource named like a built-in", "hosts:\n  - name: a\n    slots: 1\n    resources: {slots: 4}\n", 4, 17, "hosts[0].resources.slots", "already taken by the built-in attribute slots"},
	{"resource named like a total", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: 1, maxmem: 2}\n", 4, 25, "hosts[0].resources.maxmem", `already taken by the total of resource "mem"`},
	{"tag named like a resource", "hosts:\n  - name: a\n    slots: 1\n    resources: {mem: 1}\n    tags: [mem]\n", 5, 12, "hosts[0].tags[0]", `already taken by resource "mem"`},
	{"duplicate tag", "hosts:\n  - name: a\n    slots: 1\n    tags: [ssd, ssd]\n", 4, 17, "hosts[0].tags[1]", `duplicate tag "ssd"`},
	{"tags not a list", "hosts:\n  - name: a\n    slots: 1\n    tags: ssd\n", 4, 11, "hosts[0].tags", `expected a list, got string "ssd"`},
	{"bad host status", "hosts:\n  - {name: a, slots: 1, status: down}\n", 2, 33, "hosts[0].status", `must be one of ok, closed, unavail, got "down"`},

	// shared
	{"shared negative", h1 + "shared: {lic: -3}\n", 3, 15, "shared.lic", "must be >= 0, got -3"},
	{"shared not a mapping", h1 + "shared: [lic]\n", 3, 9, "shared", "expected a mapping, got a list"},
	{"shared named like a host resource", "hosts:\n  - {name: a, slots: 1, resources: {mem: 1}}\nshared: {mem: 4}\n", 3, 10, "shared.mem", `"mem" is already a host resource`},

	// queues
	{"empty queue list", h1 + "queues: []\n", 3, 9, "queues", "must not be empty"},
	{"queue name missing", h1 + "queues:\n  - {priority: 3}\n", 4, 5, "queues[0].name", "missing required field"},
	{"duplicate queue name", h1 + "queues:\n  - {name: q}\n  - {name: q}\n", 5, 12, "queues[1].name", `duplicate queue name "q" (first at queues[0])`},
	{"bad policy", h1 + "queues:\n  - {name: q, policy: sjf}\n", 4, 23, "queues[0].policy", `must be one of fcfs, firstfit, easy, conservative, got "sjf"`},
	{"bad picker", h1 + "queues:\n  - {name: q, picker: random}\n", 4, 23, "queues[0].picker", `must be one of priority, fairshare, got "random"`},
	{"priority float", h1 + "queues:\n  - {name: q, priority: 1.5}\n", 4, 25, "queues[0].priority", "expected an integer, got number 1.5"},
	{"queue names unknown host", h1 + "queues:\n  - {name: q, hosts: [a, b]}\n", 4, 26, "queues[0].hosts[1]", `unknown host "b"`},
	{"shares without fairshare", h1 + "queues:\n  - {name: q, shares: {a: 1}}\n", 4, 15, "queues[0].shares", "only a queue with picker: fairshare has shares"},
	{"zero share", h1 + "queues:\n  - {name: q, picker: fairshare, shares: {a: 0}}\n", 4, 46, "queues[0].shares.a", "must be >= 1, got 0"},

	// limits
	{"limit names unknown queue", h1 + "limits:\n  - {name: l, queues: [x], slots: 1}\n", 4, 24, "limits[0].queues[0]", `unknown queue "x"`},
	{"limit names unknown host", h1 + "limits:\n  - {name: l, per_host: [a, z], slots: 1}\n", 4, 29, "limits[0].per_host[1]", `unknown host "z"`},
	{"users and per_user", h1 + "limits:\n  - {name: l, users: all, per_user: all, slots: 1}\n", 4, 37, "limits[0].per_user", "cannot be combined with users"},
	{"all inside a list", h1 + "limits:\n  - {name: l, users: [all], slots: 1}\n", 4, 23, "limits[0].users[0]", `"all" inside a list is ambiguous`},
	{"consumers a bare name", h1 + "limits:\n  - {name: l, users: bob, slots: 1}\n", 4, 22, "limits[0].users", `expected "all" or a list of user names, got string "bob"`},
	{"consumers empty list", h1 + "limits:\n  - {name: l, users: [], slots: 1}\n", 4, 22, "limits[0].users", "must not be empty"},
	{"limit without maximum", h1 + "limits:\n  - {name: l, users: all}\n", 4, 5, "limits[0]", "at least one of slots, jobs, mem, resources"},
	{"limit slots negative", h1 + "limits:\n  - {name: l, slots: -1}\n", 4, 22, "limits[0].slots", "must be >= 0, got -1"},
	{"limit mem without mem hosts", h1 + "limits:\n  - {name: l, mem: 100}\n", 4, 20, "limits[0].mem", "no host has a mem resource"},
	{"limit unknown resource", h1 + "limits:\n  - {name: l, resources: {lic: 1}}\n", 4, 27, "limits[0].resources.lic", `"lic" is neither a host resource nor a shared resource`},
	{"duplicate limit name", h1 + "limits:\n  - {name: l, slots: 1}\n  - {name: l, jobs: 1}\n", 5, 12, "limits[1].name", `duplicate limit name "l" (first at limits[0])`},

	// host_groups and user_groups (docs/scenario.md)
	{"user group cycle", h1 + "user_groups:\n  chem: [alice, all_chem]\n  all_chem: [chem, carol]\n", 5, 14, "user_groups.all_chem[0]",
		"cycle of user groups: chem → all_chem → chem"},
	{"user group in itself", h1 + "user_groups:\n  chem:\n    members: [alice, chem]\n", 5, 22, "user_groups.chem.members[1]", "cycle of user groups: chem → chem"},
	{"host group cycle", h1 + "host_groups:\n  g1: [g2]\n  g2: [g1]\n", 5, 8, "host_groups.g2[0]", "cycle of host groups: g1 → g2 → g1"},
	{"unknown host in a host group", h1 + "host_groups:\n  gpu_hosts: [a, g9]\n", 4, 18, "host_groups.gpu_hosts[1]", `unknown host or host group "g9"`},
	{"duplicate user group", h1 + "user_groups:\n  chem: [alice]\n  chem: [bob]\n", 5, 3, "user_groups.chem", `duplicate key "chem" (first at 4:3)`},
	{"host group named like a host", h1 + "host_groups:\n  a: [a]\n", 4, 3, "host_groups.a", `host group "a" has the name of a host`},
	{"user group named all", h1 + "user_groups:\n  all: [a]\n", 4, 3, "user_groups.all", `"all" is reserved and cannot name a user group`},
	{"empty host group", h1 + "host_groups:\n  g: []\n", 4, 6, "host_groups.g", "a group needs at least one member"},
	{"user group not a list", h1 + "user_groups:\n  chem: alice\n", 4, 9, "user_groups.chem", `expected a list of user names and user group names, got string "alice"`},
	{"member listed twice", h1 + "user_groups:\n  chem: [alice, alice]\n", 4, 17, "user_groups.chem[1]", `member "alice" is listed twice`},
	{"all as a member", h1 + "user_groups:\n  chem: [bob, all]\n", 4, 15, "user_groups.chem[1]", `"all" cannot be a member of a group`},
	{"group shares of a non-member", h1 + "user_groups:\n  chem: {members: [alice], shares: {bob: 2}}\n", 4, 37, "user_groups.chem.shares.bob", `"bob" is not a member of the group`},
	{"job user named like a user group", h1 + "user_groups:\n  chem: [alice]\njobs:\n  - {id: 1, user: chem}\n", 6, 19, "jobs[0].user", `user "chem" has the name of a user group`},
	{"queue names unknown host group", h1 + "host_groups:\n  g: [a]\nqueues:\n  - {name: q, hosts: [g, gg]}\n", 6, 26, "queues[0].hosts[1]", `unknown host "gg"`},

	// jobs
	{"jobs not a list", h1 + "jobs: {id: 1}\n", 3, 7, "jobs", "expected a list, got a mapping"},
	{"job not a mapping", h1 + "jobs:\n  - 5\n", 4, 5, "jobs[0]", "expected a mapping, got number 5"},
	{"job id missing", h1 + "jobs:\n  - {user: u}\n", 4, 5, "jobs[0].id", "missing required field"},
	{"job id negative", h1 + "jobs:\n  - {id: -1}\n", 4, 10, "jobs[0].id", "must be >= 0, got -1"},
	{"job id float", h1 + "jobs:\n  - {id: 1.0}\n", 4, 10, "jobs[0].id", "expected an integer, got number 1.0"},
	{"duplicate job id", h1 + "jobs:\n  - {id: 1}\n  - {id: 1}\n", 5, 10, "jobs[1].id", "duplicate job id 1 (first at jobs[0])"},
	{"job names unknown queue", h1 + "jobs:\n  - {id: 1, queue: nope}\n", 4, 20, "jobs[0].queue", `unknown queue "nope"`},
	{"job user not a string", h1 + "jobs:\n  - {id: 1, user: [a]}\n", 4, 19, "jobs[0].user", "expected a string, got a list"},
	{"submit negative", h1 + "jobs:\n  - {id: 1, submit: -5}\n", 4, 21, "jobs[0].submit", "must be >= 0, got -5"},
	{"bad resreq", h1 + "jobs:\n  - {id: 1, resreq: \"select[mem>\"}\n", 4, 21, "jobs[0].resreq", "resreq: col 12: "},
	{"tasks min > max", h1 + "jobs:\n  - {id: 1, tasks: \"4,2\"}\n", 4, 20, "jobs[0].tasks", `"4,2": min 4 is greater than max 2`},
	{"tasks zero", h1 + "jobs:\n  - {id: 1, tasks: 0}\n", 4, 20, "jobs[0].tasks", "must be >= 1, got 0"},
	{"tasks zero min", h1 + "jobs:\n  - {id: 1, tasks: \"0,2\"}\n", 4, 20, "jobs[0].tasks", "task counts must be >= 1"},
	{"tasks three parts", h1 + "jobs:\n  - {id: 1, tasks: \"1,2,3\"}\n", 4, 20, "jobs[0].tasks", `expected "n" or "min,max"`},
	{"tasks not a number", h1 + "jobs:\n  - {id: 1, tasks: \"x\"}\n", 4, 20, "jobs[0].tasks", "whole numbers"},
	{"tasks float", h1 + "jobs:\n  - {id: 1, tasks: 1.5}\n", 4, 20, "jobs[0].tasks", `expected a task count n or "min,max", got number 1.5`},
	{"running on unknown host", h1 + "jobs:\n  - {id: 1, running_on: {zz: 1}}\n", 4, 26, "jobs[0].running_on.zz", `unknown host "zz"`},
	{"running on a long unknown host", h1 + "jobs:\n  - {id: 1, running_on: {" + strings.Repeat("h", 50) + ": 1}}\n", 4, 26,
		`jobs[0].running_on["` + strings.Repeat("h", 40) + `"...]`, `unknown host "` + strings.Repeat("h", 40) + `"...`},
	{"submit above 10^15", h1 + "jobs:\n  - {id: 1, submit: 1000000000000001}\n", 4, 21, "jobs[0].submit", "must be <= 1000000000000000, got 1000000000000001"},
	{"horizon passed by a start", h1 + "jobs:\n  - {id: 1, runtime: 10}\n  - {id: 2, submit: 5, start: 999999999999991, running_on: {a: 1}}\n", 5, 5, "jobs[1]",
		"the latest submit or start time so far (999999999999991 s) plus the runtimes of jobs[0] to jobs[1] (10 s) exceed 10^15 s"},
	{"running on zero slots", h1 + "jobs:\n  - {id: 1, running_on: {a: 0}}\n", 4, 29, "jobs[0].running_on.a", "must be >= 1, got 0"},
	{"running on nothing", h1 + "jobs:\n  - {id: 1, running_on: {}}\n", 4, 25, "jobs[0].running_on", "must not be empty"},
	{"running slots outside tasks", h1 + "jobs:\n  - {id: 1, tasks: 2, running_on: {a: 1}}\n", 4, 35, "jobs[0].running_on", "holds 1 slots in total, outside the job's tasks 2"},
	{"running jobs over-commit slots", h1 + "jobs:\n  - {id: 1, running_on: {a: 1}}\n  - {id: 2, running_on: {a: 1}}\n", 5, 25, "jobs[1].running_on",
		"over-commits the cluster: host a: 1 slots requested, 0 free"},
	{"running job over-commits mem", "hosts:\n  - {name: a, slots: 4, resources: {mem: 1000}}\nreservation_usage: {mem: per_task}\njobs:\n  - {id: 1, tasks: 2, resreq: \"rusage[mem=600]\", running_on: {a: 2}}\n",
		5, 62, "jobs[0].running_on", "over-commits the cluster: host a: 1200 mem requested, 1000 free"},
	{"running job over-commits mem per host", "hosts:\n  - {name: a, slots: 4, resources: {mem: 1000}}\njobs:\n  - {id: 1, tasks: 2, resreq: \"rusage[mem=600]\", running_on: {a: 2}}\n  - {id: 2, tasks: 1, resreq: \"rusage[mem=600]\", running_on: {a: 1}}\n",
		5, 62, "jobs[1].running_on", "over-commits the cluster: host a: 600 mem requested, 400 free"},
	{"preemptive self", h1 + "queues:\n  - {name: q, priority: 2, preemptive: [q]}\n", 4, 41, "queues[0].preemptive[0]", "a queue cannot preempt itself"},
	{"preemptive higher", h1 + "queues:\n  - {name: q, priority: 2, preemptive: [r]}\n  - {name: r, priority: 2}\n", 4, 41, "queues[0].preemptive[0]",
		`queue "r" has priority 2, not lower than "q"'s 2: a queue preempts only queues of lower priority`},
	{"preemptive unknown", h1 + "queues:\n  - {name: q, priority: 2, preemptive: [x]}\n", 4, 41, "queues[0].preemptive[0]", `unknown queue "x"`},
	{"preempt_action", h1 + "queues:\n  - {name: q, preempt_action: kill}\n", 4, 31, "queues[0].preempt_action", `must be one of suspend, requeue, got "kill"`},
	{"reservation_usage of an unknown resource", h1 + "reservation_usage: {gpu: per_task}\n", 3, 21, "reservation_usage.gpu", "unknown host resource \"gpu\" (no host defines it)"},
	{"reservation_usage of a shared resource", h1 + "shared: {lic: 1}\nreservation_usage: {lic: per_task}\n", 4, 21, "reservation_usage.lic", "is a shared resource, which is reserved once per job"},
	{"reservation_usage bad method", "hosts:\n  - {name: a, slots: 4, resources: {mem: 1000}}\nreservation_usage: {mem: per_slot}\n", 3, 26, "reservation_usage.mem", "must be one of per_host, per_task, per_job, got \"per_slot\""},
	{"running job over-commits shared", h1 + "shared: {lic: 1}\njobs:\n  - {id: 1, resreq: \"rusage[lic=2]\", running_on: {a: 1}}\n",
		5, 50, "jobs[0].running_on", "over-commits the cluster: shared resource lic: 2 requested, 1 free"},
	{"running job on host without the resource", h1 + "  - {name: b, slots: 1, resources: {mem: 10}}\njobs:\n  - {id: 1, resreq: \"rusage[mem=1]\", running_on: {a: 1}}\n",
		5, 50, "jobs[0].running_on", "host a has no resource mem"},
	{"start of a pending job", h1 + "jobs:\n  - {id: 1, start: 5}\n", 4, 20, "jobs[0].start", "only a running job"},
	{"start before submit", h1 + "jobs:\n  - {id: 1, submit: 10, start: 5, running_on: {a: 1}}\n", 4, 32, "jobs[0].start", "must be >= submit (10), got 5"},
	// Job arrays (docs/arrays.md).
	{"array: bad index list", h1 + "jobs:\n  - {id: 1, array: \"1-3,x\"}\n", 4, 20, "jobs[0].array", "array: col 5: expected a digit, got 'x'"},
	{"array: too large", h1 + "max_array_size: 3\njobs:\n  - {id: 1, array: \"1-4\"}\n", 5, 20, "jobs[0].array", "array: col 1: more than 3 elements"},
	{"array: ids taken", h1 + "jobs:\n  - {id: 3}\n  - {id: 1, array: \"1-3\"}\n", 5, 20, "jobs[1].array", "the array's 3 elements take job ids 1 to 3, and id 3 is jobs[0]'s"},
	{"array: id after it", h1 + "jobs:\n  - {id: 1, array: \"1-3\"}\n  - {id: 2}\n", 5, 10, "jobs[1].id", "duplicate job id 2 (first at jobs[0])"},
	{"array: running", h1 + "jobs:\n  - {id: 1, array: \"1-2\", running_on: {a: 1}}\n", 4, 20, "jobs[0].array", "an array cannot have running_on"},
	{"array: max size 0", h1 + "max_array_size: 0\n", 3, 17, "max_array_size", "must be >= 1"},
	// Dependencies (docs/dependencies.md).
	{"depend: syntax", h1 + "jobs:\n  - {id: 1, depend: \"done(\"}\n", 4, 21, "jobs[0].depend", "depend: col 6: expected a job ID or name"},
	{"job name with a tab", h1 + "jobs:\n  - {id: 1, name: \"a\\tb\"}\n", 4, 19, "jobs[0].name", "control character '\\t' in the job name"},
	{"exclusive job in a queue that takes none", h1 + "jobs:\n  - {id: 1, exclusive: true}\n", 4, 24, "jobs[0].exclusive", `queue "normal" does not take exclusive jobs (give it exclusive: true)`},
	{"exclusive not a bool", h1 + "queues:\n  - {name: q, exclusive: 1}\n", 4, 26, "queues[0].exclusive", "want true or false, got number 1"},
	{"exit_code out of range", h1 + "jobs:\n  - {id: 1, exit_code: 256}\n", 4, 24, "jobs[0].exit_code", "must be <= 255"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.in))
			if err == nil {
				t.Fatalf("no error; loaded %d hosts", len(c.Hosts))
			}
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *ScenarioError", err, err)
			}
			if se.File != "t.yaml" || se.Line != tc.line || se.Col != tc.col || se.Path != tc.path || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got  %d:%d %q %q\nwant %d:%d %q containing %q", se.Line, se.Col, se.Path, se.Msg, tc.line, tc.col, tc.path, tc.msg)
			}
		})
	}
}

func TestScenarioErrorFormat(t *testing.T) {
	in := "# four hosts\nhosts:\n  - {name: a, slots: 1}\n  - {name: b, slots: 1}\n  - {name: c, slots: 1}\n  - name: d\n    slots: 0\n"
	_, err := Parse("examples/x.yaml", []byte(in))
	want := "examples/x.yaml:7:12: hosts[3].slots: must be >= 1, got 0"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	for _, tc := range []struct {
		e    ScenarioError
		want string
	}{
		{ScenarioError{File: "f", Path: "hosts", Msg: "m"}, "f: hosts: m"},
		{ScenarioError{File: "f", Line: 2, Col: 3, Msg: "m"}, "f:2:3: m"},
		{ScenarioError{Line: 2, Col: 3, Path: "p", Msg: "m"}, "2:3: p: m"},
		{ScenarioError{Msg: "m"}, "m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestParseResreqErrorUnwraps(t *testing.T) {
	in := h1 + "jobs:\n  - {id: 1}\n  - {id: 2}\n  - {id: 3, resreq: \"select[mem>1] rusage[mem=]\"}\n"
	_, err := Parse("t.yaml", []byte(in))
	var re *resreq.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v does not wrap a *resreq.Error", err)
	}
	want := "t.yaml:6:21: jobs[2].resreq: " + re.Error()
	if err.Error() != want || re.Col != 26 {
		t.Errorf("got %q (col %d), want %q (col 26)", err, re.Col, want)
	}
}

func TestParseYAMLErrorUnwraps(t *testing.T) {
	_, err := Parse("t.yaml", []byte("hosts: [\n"))
	var se *ScenarioError
	if !errors.As(err, &se) || se.Unwrap() == nil {
		t.Fatalf("error %v does not wrap go-yaml's error", err)
	}
}

// TestDefaultRunLimit: a job without an estimate takes its queue's
// default_runlimit; one with an estimate keeps it; the field is at least 1.
func TestDefaultRunLimit(t *testing.T) {
	c, err := Parse("t.yaml", []byte(`hosts: [{name: h, slots: 1}]
queues:
  - {name: a, default_runlimit: 600}
  - {name: b}
jobs:
  - {id: 1, queue: a}
  - {id: 2, queue: a, estimate: 5}
  - {id: 3, queue: b}
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{600, 5, 0} {
		if got := c.Jobs[i].Estimate; got != want {
			t.Errorf("job %d: estimate %d, want %d", i+1, got, want)
		}
	}
	if _, err := Parse("t.yaml", []byte("hosts: [{name: h, slots: 1}]\nqueues: [{name: a, default_runlimit: 0}]\n")); err == nil ||
		!strings.Contains(err.Error(), "default_runlimit") {
		t.Errorf("default_runlimit 0: %v, want an error naming the field", err)
	}
}

// TestMaxJobTest: a queue's max_job_test is read (0, every job, when
// absent), and must be a whole number of at least 1, the error naming the
// file, line and field.
func TestMaxJobTest(t *testing.T) {
	c, err := Parse("t.yaml", []byte("hosts: [{name: h, slots: 1}]\nqueues:\n  - {name: a, policy: conservative, max_job_test: 150}\n  - {name: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.Queues[0].MaxJobTest, c.Queues[1].MaxJobTest; a != 150 || b != 0 {
		t.Errorf("max_job_test %d and %d, want 150 and 0", a, b)
	}
	for _, v := range []string{"0", "-3", "1.5", "many"} {
		_, err := Parse("t.yaml", []byte("hosts: [{name: h, slots: 1}]\nqueues:\n  - {name: a, max_job_test: "+v+"}\n"))
		if err == nil || !strings.Contains(err.Error(), "max_job_test") || !strings.Contains(err.Error(), "t.yaml:3") {
			t.Errorf("max_job_test %s: %v, want an error naming t.yaml:3 and the field", v, err)
		}
	}
}

// TestArray: a job with array: stands for its elements, consecutive job
// IDs from its own, in index order, each with its index and the cap.
func TestArray(t *testing.T) {
	c, err := Parse("t.yaml", []byte(`hosts: [{name: h, slots: 1}]
jobs:
  - {id: 1, array: "2-6:2%2", runtime: 10}
  - {id: 4, tasks: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, array JobID
		index     int64
		limit     int
	}{{1, 1, 2, 2}, {2, 1, 4, 2}, {3, 1, 6, 2}, {4, 0, 0, 0}}
	if len(c.Jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(c.Jobs), len(want))
	}
	for i, w := range want {
		j := c.Jobs[i]
		if j.ID != w.id || j.Array != w.array || j.ArrayIndex != w.index || j.ArrayLimit != w.limit || j.Runtime != 10 && w.array != 0 {
			t.Errorf("jobs[%d]: id %d array %d index %d limit %d runtime %d, want %+v", i, j.ID, j.Array, j.ArrayIndex, j.ArrayLimit, j.Runtime, w)
		}
	}
	if c.MaxArraySize != 1000 {
		t.Errorf("max array size %d, want the default 1000", c.MaxArraySize)
	}
}
