package cluster

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// This file reads a scenario's jobs one at a time (issue 15 §3). go-yaml
// turns a whole document into tokens and nodes of several kilobytes per
// job before the loader reads any of it; a scenario of a million jobs took
// 13.6 GB. When the jobs are a block list under a line "jobs:" at column
// 1, as they usually are, Parse cuts the list out of the text: the rest of
// the document is parsed with blank lines in its place (every position
// stays what it was), then each item is parsed alone, with its positions
// shifted to the file's, read and dropped. The result is the whole
// document's: on success it is the Cluster the whole document gives; a
// file of at most MaxScenarioSize bytes whose list cannot be read that
// way, or which has an error, is read whole again, so that its error is
// the one the whole document gives. A larger file must be read this way,
// and its errors are those of the pieces (docs/scenario.md, "Size and
// cost").

// MaxLargeScenarioSize is the largest scenario Load and Parse accept when
// its jobs are read one at a time: 1 GiB (about ten million jobs written
// one per line). The rest of the file is still at most MaxScenarioSize.
const MaxLargeScenarioSize = 1 << 30

// jobsRegion is where a scenario's jobs list lies in its text: the lines
// after the line "jobs:" (keyLine) up to the next line that starts at
// column 1 with something other than a comment or an item, [start, end)
// in bytes. Its items start with "- " at column col, the first one at
// byte first and line firstLine; lines is the number of lines in the
// region and items the number of items.
type jobsRegion struct {
	keyLine          int
	start, end       int
	lines            int
	first, firstLine int
	col              int
	items            int
}

// lineKind classifies a line of text for findJobs.
type lineKind uint8

const (
	lineBlank   lineKind = iota // only spaces and tabs
	lineComment                 // a comment, after spaces and tabs
	lineText                    // anything else, after indent spaces
	lineTab                     // anything else, after a tab in the indentation
)

// nextLine returns the line of data that starts at i, without its line
// break (a '\r' before the '\n' included), and the offset of the next one.
func nextLine(data []byte, i int) ([]byte, int) {
	j := bytes.IndexByte(data[i:], '\n')
	next := len(data)
	if j >= 0 {
		next = i + j + 1
	} else {
		j = len(data) - i
	}
	return bytes.TrimSuffix(data[i:i+j], []byte{'\r'}), next
}

// classify returns the kind of line and its indentation in spaces.
func classify(line []byte) (lineKind, int) {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	rest := bytes.TrimLeft(line[indent:], " \t")
	switch {
	case len(rest) == 0:
		return lineBlank, indent
	case rest[0] == '#':
		return lineComment, indent
	case indent < len(line) && line[indent] == '\t':
		return lineTab, indent
	}
	return lineText, indent
}

// isItem reports whether line starts an item of a block list whose '-'
// is at column col.
func isItem(line []byte, col int) bool {
	i := col - 1
	return len(line) > i && line[i] == '-' && (len(line) == i+1 || line[i+1] == ' ' || line[i+1] == '\t')
}

// findJobs finds the jobs list in data. It returns found false when no
// line is "jobs:" at column 1 followed by a block list; and an error
// (with its position) when such a list is laid out in a way findJobs does
// not cut: a line of the list indented with a tab, or less than the items
// but at column 1. The layout is only the text's: the loader then checks
// that the "jobs" key is one of the document's top-level mapping.
func findJobs(data []byte) (r jobsRegion, found bool, line, col int, why string) {
	i, n := 0, 1
	for i < len(data) {
		text, next := nextLine(data, i)
		if rest, ok := bytes.CutPrefix(text, []byte("jobs:")); ok {
			if k, _ := classify(rest); k == lineBlank || k == lineComment && (rest[0] == ' ' || rest[0] == '\t') {
				r.keyLine, r.start = n, next
				break
			}
		}
		i, n = next, n+1
	}
	if r.start == 0 {
		return r, false, 0, 0, ""
	}
	// The first item.
	i, n = r.start, r.keyLine+1
	for r.col == 0 {
		if i >= len(data) {
			return r, false, 0, 0, "" // jobs: null
		}
		text, next := nextLine(data, i)
		switch k, indent := classify(text); {
		case k == lineBlank || k == lineComment:
		case k == lineTab:
			return r, true, n, indent + 1, "its lines must be indented with spaces, not tabs"
		case isItem(text, indent+1):
			r.col, r.first, r.firstLine = indent+1, i, n
			continue
		case indent == 0:
			return r, false, 0, 0, "" // jobs: null
		default:
			return r, true, n, indent + 1, "its value must be a block list of jobs (\"- \" items) on the lines after \"jobs:\""
		}
		i, n = next, n+1
	}
	// The items, up to the first line at column 1 that ends the list.
	for i < len(data) {
		text, next := nextLine(data, i)
		k, indent := classify(text)
		switch {
		case k == lineBlank || k == lineComment:
		case indent >= r.col:
		case k == lineTab:
			return r, true, n, indent + 1, "its lines must be indented with spaces, not tabs"
		case indent == r.col-1 && isItem(text, r.col):
			r.items++
		case indent == 0:
			r.end, r.lines = i, n-r.keyLine-1
			return r, true, 0, 0, ""
		default:
			return r, true, n, indent + 1, fmt.Sprintf("each line of the jobs list must be indented at least as much as its items (column %d), or start a new item there", r.col)
		}
		i, n = next, n+1
	}
	r.end, r.lines = len(data), n-r.keyLine-1
	return r, true, 0, 0, ""
}

// jobItems yields the items of a jobsRegion one at a time.
type jobItems struct {
	data       []byte
	r          *jobsRegion
	next, line int // the next item's offset and line
}

// item returns the next item's text and line, or ok false at the end.
func (it *jobItems) item() (text []byte, line int, ok bool) {
	if it.next >= it.r.end {
		return nil, 0, false
	}
	start, line := it.next, it.line
	_, i := nextLine(it.data, start)
	n := line + 1
	for i < it.r.end {
		t, next := nextLine(it.data, i)
		if k, indent := classify(t); k == lineText && indent == it.r.col-1 && isItem(t, it.r.col) {
			break
		}
		i, n = next, n+1
	}
	it.next, it.line = i, n
	return it.data[start:i], line, true
}

// streamed is the state of a Parse that reads the jobs one at a time.
type streamed struct {
	r       jobsRegion
	items   jobItems
	depth   depthCheck      // at the start of the next item (depthCheck, tooDeep)
	atJobs  bool            // depth holds the state where the jobs list starts
	aliases map[string]bool // names of the aliases after the jobs list
	buf     []byte          // "jobs:\n" and an item's text
}

// parseStreamed parses data with its jobs read one at a time. final
// false means the whole document must be read instead: no jobs list was
// found in a file of at most MaxScenarioSize bytes, or that file has an
// error, which the whole document names as it should be named.
func parseStreamed(file string, data []byte) (c *Cluster, final bool, err error) {
	large := len(data) > MaxScenarioSize
	l := &loader{file: file, budget: 1_000_000 + 10*len(data)}
	if len(data) > MaxLargeScenarioSize {
		return nil, true, &ScenarioError{File: file, Msg: tooLargeStreamed}
	}
	data = bytes.TrimPrefix(data, []byte(bom))
	r, found, line, col, why := findJobs(data)
	if !found {
		return nil, false, nil
	}
	if err := l.checkText(data); err != nil {
		return nil, large, err
	}
	if why != "" {
		return nil, large, l.notStreamable(line, col, "jobs", why)
	}
	if len(data)-(r.end-r.start) > MaxScenarioSize {
		return nil, large, &ScenarioError{File: file, Msg: tooLargeBesideJobs}
	}
	l.stream = &streamed{r: r, items: jobItems{data: data, next: r.first, line: r.firstLine}}
	l.stream.items.r = &l.stream.r
	root, err := l.parseRest(data, len(data))
	if err == nil {
		c, err = l.load(root)
	}
	return c, large || err == nil, err
}

// notStreamable is the error of a large scenario whose jobs cannot be
// read one at a time.
func (l *loader) notStreamable(line, col int, path, why string) *ScenarioError {
	return &ScenarioError{File: l.file, Line: line, Col: col, Path: path,
		Msg: clipMsg("a scenario larger than 16 MiB is read one job at a time, and then " + why)}
}

// The messages of files too large for Parse.
const (
	tooLargeStreamed   = "the file is larger than 1073741824 bytes (1 GiB), the most a scenario may hold"
	tooLargeBesideJobs = "the file is larger than 16777216 bytes (16 MiB) without its jobs list, the most a scenario may hold beside its jobs"
)

// parseRest parses the document without its jobs list, which is replaced
// by as many blank lines, and checks that "jobs:" is a key of its
// top-level block mapping. size is the file's size: beyond
// MaxScenarioSize, the bound on block mappings (maxMapWork) grows with it.
func (l *loader) parseRest(data []byte, size int) (root ast.Node, err error) {
	s := l.stream
	var b strings.Builder
	b.Grow(len(data) - (s.r.end - s.r.start) + s.r.lines)
	b.Write(data[:s.r.start])
	for range s.r.lines {
		b.WriteByte('\n')
	}
	b.Write(data[s.r.end:])
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, &ScenarioError{File: l.file, Msg: clipMsg(fmt.Sprintf("YAML parser failed: %v", r))}
		}
	}()
	tokens := lexer.Tokenize(b.String())
	d := depthCheck{maxWork: maxMapWork}
	if size > MaxScenarioSize {
		d.maxWork = int(int64(maxMapWork) * int64(size) / MaxScenarioSize)
	}
	for _, tk := range tokens {
		if tk != nil && tk.Position != nil && tk.Position.Line > s.r.keyLine && !s.atJobs {
			s.depth, s.atJobs = d.clone(), true // the state where the jobs list starts
		}
		if bad, msg := d.add(tk); bad != nil {
			return nil, &ScenarioError{File: l.file, Line: bad.Position.Line, Col: bad.Position.Column, Msg: msg}
		}
	}
	if !s.atJobs {
		s.depth, s.atJobs = d.clone(), true
	}
	s.depth.work = d.work // the squares of all the rest; the jobs' add up after them
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, l.yamlError(err)
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, l.errAt(doc.Body, "", "the file holds more than one YAML document; a scenario is one document")
		}
		body = doc.Body
	}
	if !l.topJobsKey(body) {
		return nil, l.notStreamable(s.r.keyLine, 1, "jobs", "\"jobs:\" must be a key of the top-level block mapping")
	}
	l.collectAnchors(body)
	s.aliases = map[string]bool{}
	ast.Walk(aliasVisitor{after: s.r.keyLine, names: s.aliases}, body)
	// The sections after the jobs list are read before it: an alias
	// there must not name an anchor of a job.
	if name, ok := anchorIn(data[s.r.start:s.r.end], s.aliases); ok {
		return nil, l.notStreamable(s.r.keyLine, 1, "jobs", fmt.Sprintf("an alias after the jobs list may not name an anchor in it (&%s)", clipText(name)))
	}
	return body, nil
}

// anchorIn returns the first name of names that text holds as an anchor,
// &name after a space, a tab, a line break, '[', '{' or ',' (some of them
// may be in strings).
func anchorIn(text []byte, names map[string]bool) (string, bool) {
	if len(names) == 0 {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '&' || i > 0 && !strings.ContainsRune(" \t\n\r[{,", rune(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && !strings.ContainsRune(" \t\n\r[]{},", rune(text[j])) {
			j++
		}
		if names[string(text[i+1:j])] {
			return string(text[i+1 : j]), true
		}
	}
	return "", false
}

// topJobsKey reports whether body is a block mapping whose key "jobs" is
// the line the jobs list was cut from, with a null value.
func (l *loader) topJobsKey(body ast.Node) bool {
	for _, mv := range blockMapping(body) {
		if mv == nil {
			continue
		}
		k, ok := mv.Key.(*ast.StringNode)
		if !ok || k.Value != "jobs" || k.Token == nil || k.Token.Type != token.StringType {
			continue
		}
		if line, col := pos(k); line != l.stream.r.keyLine || col != 1 {
			continue
		}
		switch mv.Value.(type) {
		case nil, *ast.NullNode:
			return true
		}
	}
	return false
}

// blockMapping returns the entries of n if it is a block mapping (go-yaml
// gives a lone "key: value" as a MappingValueNode), else nil.
func blockMapping(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		if !m.IsFlowStyle {
			return m.Values
		}
	case *ast.MappingValueNode:
		if !m.IsFlowStyle {
			return []*ast.MappingValueNode{m}
		}
	}
	return nil
}

// aliasVisitor collects the names of the aliases after line after.
type aliasVisitor struct {
	after int
	names map[string]bool
}

func (v aliasVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AliasNode); ok && a.Value != nil && a.Value.GetToken() != nil {
		if line, _ := pos(a); line > v.after {
			v.names[a.Value.GetToken().Value] = true
		}
	}
	return v
}

// nextJob parses the next item of the jobs list alone and returns its
// node, with the file's positions; nil at the end of the list.
func (l *loader) nextJob(i int) (n ast.Node, err error) {
	s := l.stream
	text, line, ok := s.items.item()
	if !ok {
		return nil, nil
	}
	path := indexPath("jobs", i)
	// The item alone, as the value of "jobs", followed by an item "- 0"
	// when something follows it in the file: go-yaml places a null at the
	// end of the input one column further than before a next line.
	s.buf = append(append(s.buf[:0], "jobs:\n"...), text...)
	end := bytes.Count(s.buf, []byte{'\n'}) + 1 // the line after the item in s.buf
	sentinel := s.items.next < len(s.items.data)
	if sentinel {
		s.buf = append(append(s.buf, strings.Repeat(" ", s.r.col-1)...), "- 0\n"...)
	}
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, &ScenarioError{File: l.file, Line: line, Col: s.r.col, Msg: clipMsg(fmt.Sprintf("YAML parser failed: %v", r))}
		}
	}()
	tokens := lexer.Tokenize(string(s.buf))
	anchors := false
	for _, tk := range tokens {
		if tk == nil || tk.Position == nil {
			continue
		}
		synthetic := tk.Position.Line == 1 || tk.Position.Line >= end // "jobs:" or "- 0"
		tk.Position.Line += line - 2
		anchors = anchors || tk.Type == token.AnchorType
		if synthetic {
			continue
		}
		if bad, msg := s.depth.add(tk); bad != nil {
			return nil, &ScenarioError{File: l.file, Line: bad.Position.Line, Col: bad.Position.Column, Msg: msg}
		}
	}
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, l.yamlError(err)
	}
	var item ast.Node
	if len(f.Docs) == 1 && f.Docs[0] != nil {
		if m := blockMapping(f.Docs[0].Body); len(m) == 1 && m[0] != nil {
			if seq, ok := m[0].Value.(*ast.SequenceNode); ok && !seq.IsFlowStyle && len(seq.Values) == 1+b2i(sentinel) {
				item = seq.Values[0]
			}
		}
	}
	if item == nil {
		return nil, l.notStreamable(line, s.r.col, path, "each item of the jobs list must hold one job")
	}
	if anchors {
		if err := l.addAnchors(item, line, path); err != nil {
			return nil, err
		}
	}
	return item, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addAnchors records the anchors of one job, after those before it.
func (l *loader) addAnchors(item ast.Node, line int, path string) error {
	found := map[string][]*ast.AnchorNode{}
	ast.Walk(anchorVisitor{found}, item)
	for name, as := range found {
		if l.stream.aliases[name] {
			return l.notStreamable(line, l.stream.r.col, path, fmt.Sprintf("an alias after the jobs list may not name an anchor in it (&%s)", clipText(name)))
		}
		for _, a := range as {
			all := l.anchors[name]
			k := sort.Search(len(all), func(i int) bool { return before(a, all[i]) })
			l.anchors[name] = slices.Insert(all, k, a)
		}
	}
	return nil
}
