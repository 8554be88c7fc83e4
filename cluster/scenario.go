package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"

	"github.com/xce-sched/xce/jobarray"
)

// ScenarioError is an error in a scenario file (docs/scenario.md). Line and
// Col are 1-based (Col counts characters, not bytes) and point at the
// offending value, or at the key or the enclosing mapping when a required
// field is missing; they are 0 when unknown. Path is the field path with
// list indices, such as "hosts[3].slots" or "jobs[0].running_on.hostA"; it
// is empty for YAML syntax errors and for errors about the whole file.
type ScenarioError struct {
	File      string
	Line, Col int
	Path      string
	Msg       string

	cause error // the underlying go-yaml or resreq error, if any
}

// Error returns "file:line:col: path: msg", leaving out the parts that are
// empty or zero.
func (e *ScenarioError) Error() string {
	var b []byte
	if e.File != "" {
		b = append(b, e.File...)
		b = append(b, ':')
	}
	if e.Line > 0 {
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ':')
		if e.Col > 0 {
			b = strconv.AppendInt(b, int64(e.Col), 10)
			b = append(b, ':')
		}
	}
	if len(b) > 0 {
		b = append(b, ' ')
	}
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Unwrap returns the go-yaml or resreq error that caused e, if any.
func (e *ScenarioError) Unwrap() error { return e.cause }

// Load reads and parses the scenario file at path; see Parse. It reads at
// most MaxLargeScenarioSize+1 bytes: a larger file is a *ScenarioError
// without reading the rest. An I/O error is returned as the os package
// gives it (naming the path).
func Load(path string) (*Cluster, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxLargeScenarioSize+1))
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a scenario (docs/scenario.md) from data; file names it in
// error messages. On success the Cluster is complete: Init has been called,
// every Job.Req is parsed and the jobs keep their file order. Running jobs
// have been checked not to over-commit any host or shared resource. Jobs
// with equal user, project or resreq strings share them, and share one
// Job.Req when they have no gpu: a Requirement is read-only.
//
// Input larger than MaxScenarioSize, characters YAML does not allow
// (control characters but tab and line breaks, invalid UTF-8), nesting
// deeper than 100 levels and block mappings of more than 100,000 keys are
// rejected before or right after tokenizing, so that a bad file costs
// bounded time and memory; any value an error message quotes is cut to 40
// characters (followed by "..."), and a message to 400 bytes. A jobs list
// written as a block list under a line "jobs:" is read one job at a time
// (scenario_stream.go), which keeps the memory of loading to a few hundred
// bytes a job beside what the Cluster keeps, and lets such a list make the
// file larger than MaxScenarioSize, up to MaxLargeScenarioSize.
//
// On failure Parse returns the first error found as a *ScenarioError.
// Sections are checked in the order hosts, host_groups, user_groups,
// shared, queues, limits, jobs (whatever their order in the file), and
// within a section in file order; the cross-checks of running jobs against
// each other come last. (In a file larger than MaxScenarioSize, a YAML
// error in a job is found when the job is read, after the sections
// before it.) Parse never panics, whatever data holds.
func Parse(file string, data []byte) (*Cluster, error) {
	if c, final, err := parseStreamed(file, data); final {
		return c, err
	}
	return parseWhole(file, data)
}

// parseWhole parses data as one YAML document, its jobs list included.
func parseWhole(file string, data []byte) (*Cluster, error) {
	l := &loader{file: file, budget: 1_000_000 + 10*len(data)}
	root, err := l.parseYAML(data)
	if err != nil {
		return nil, err
	}
	return l.load(root)
}

// bom is the UTF-8 byte order mark, which a file may start with.
const bom = "\xef\xbb\xbf"

// parseYAML checks the encoding, runs go-yaml's parser and returns the body
// of the only document (nil for an empty file).
func (l *loader) parseYAML(data []byte) (root ast.Node, err error) {
	if len(data) > MaxScenarioSize {
		return nil, &ScenarioError{File: l.file, Msg: tooLarge}
	}
	data = bytes.TrimPrefix(data, []byte(bom))
	if err := l.checkText(data); err != nil {
		return nil, err
	}
	defer func() {
		// go-yaml is third-party code: make sure a bug there cannot crash
		// the caller on malformed input.
		if r := recover(); r != nil {
			root, err = nil, &ScenarioError{File: l.file, Msg: clipMsg(fmt.Sprintf("YAML parser failed: %v", r))}
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if tk, msg := tooDeep(tokens); tk != nil {
		return nil, &ScenarioError{File: l.file, Line: tk.Position.Line, Col: tk.Position.Column, Msg: msg}
	}
	// Duplicate keys are detected by the loader (with a field path).
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, l.yamlError(err)
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			return nil, l.errAt(d.Body, "", "the file holds more than one YAML document; a scenario is one document")
		}
		body = d.Body
	}
	if body != nil {
		l.collectAnchors(body)
	}
	return body, nil
}

// yamlError turns an error of go-yaml into a ScenarioError, keeping the
// position of the offending token when go-yaml gives one.
func (l *loader) yamlError(err error) error {
	se := &ScenarioError{File: l.file, Msg: clipMsg(err.Error()), cause: err}
	var ye yaml.Error
	if errors.As(err, &ye) {
		se.Msg = clipMsg("YAML: " + ye.GetMessage())
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			se.Line, se.Col = tk.Position.Line, tk.Position.Column
		}
	}
	return se
}

// scenarioKeys are the top-level keys of a scenario.
var scenarioKeys = []string{"hosts", "host_groups", "user_groups", "shared", "queues", "limits", "max_array_size", "reservation_usage", "slurm", "jobs"}

// load builds the Cluster from the document body.
func (l *loader) load(root ast.Node) (*Cluster, error) {
	keys := scenarioKeys
	if l.config {
		keys = configKeys
		if es, _, err := l.mapping(root, ""); err == nil {
			for _, e := range es {
				if e.key == "jobs" {
					return nil, l.errAt(e.kn, "jobs", "a cluster's configuration holds no jobs: submit them (xce submit)")
				}
			}
		}
	}
	top, err := l.fields(root, "", keys)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	l.c = c
	if err := l.loadHosts(top); err != nil {
		return nil, err
	}
	if err := l.loadGroups(top); err != nil {
		return nil, err
	}
	if err := l.loadShared(top); err != nil {
		return nil, err
	}
	if err := l.loadQueues(top); err != nil {
		return nil, err
	}
	if err := l.loadLimits(top); err != nil {
		return nil, err
	}
	if err := l.loadReservationUsage(top); err != nil {
		return nil, err
	}
	if err := l.loadSlurm(top); err != nil {
		return nil, err
	}
	n, err := l.intField(top, "max_array_size", 1, jobarray.MaxSize, jobarray.DefaultMaxSize)
	if err != nil {
		return nil, err
	}
	c.MaxArraySize = int(n)
	if l.config {
		if err := l.loadServer(top); err != nil {
			return nil, err
		}
	} else if err := l.loadJobs(top); err != nil {
		return nil, err
	}
	if err := c.Init(); err != nil {
		// The loader checks attribute names before Init; this is a
		// safety net.
		return nil, l.errAt(top.value("hosts"), "hosts", "%v", err)
	}
	if err := l.checkRunning(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkRunning takes the allocations of the running jobs, in file order,
// from a fresh State and reports the first one that does not fit.
func (l *loader) checkRunning() error {
	c := l.c
	s := NewState(c)
	for i := range c.Jobs {
		j := &c.Jobs[i]
		if len(j.RunningOn) == 0 {
			continue
		}
		a := c.RunningAlloc(j)
		path := indexPath("jobs", i) + ".running_on"
		for _, h := range a.Hosts {
			for _, r := range h.Res {
				if math.IsNaN(c.Hosts[h.Host].Capacity[r.Res]) {
					return l.errAtPos(l.running[i], path, "host %s has no resource %s, which the job's rusage reserves",
						clipText(c.Hosts[h.Host].Name), clipText(c.Resources[r.Res]))
				}
			}
		}
		if err := s.Fits(a); err != nil {
			return l.errAtPos(l.running[i], path, "over-commits the cluster: %v", err)
		}
		s.Take(a)
	}
	return nil
}
