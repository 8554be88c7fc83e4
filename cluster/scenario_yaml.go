package cluster

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// This file walks go-yaml's AST: it resolves anchors, aliases, merge keys
// and tags, reads mappings (with their fields) and lists, and builds field
// paths (typed scalars are in scenario_scalar.go).
// All errors are *ScenarioError positioned at the offending node.

// loader holds the state of one Parse call.
type loader struct {
	file    string
	anchors map[string][]*ast.AnchorNode // by name, in document order
	c       *Cluster

	hostIDs   map[string]HostID
	queueIDs  map[string]QueueID
	attrs     map[string]string // attribute name -> what defines it (name clashes)
	resIDs    map[string]ResID  // host resource names
	sharedIDs map[string]SharedID
	running   map[int]position // job index -> where its running_on is

	// stream: the jobs are read one at a time (scenario_stream.go).
	stream *streamed
	// strs and reqs hold the users' and projects' names and the resource
	// requirements read so far, which later jobs share (intern, resreq).
	strs map[string]string
	reqs map[string]parsedReq

	// config: a live cluster's configuration (ParseConfig) is read, with
	// its server section (into server) and without jobs.
	config bool
	server *Server

	// work counts the mapping entries and list items read; aliases and
	// merge keys may repeat a node, so it is capped (budget) against
	// "billion laughs" inputs.
	work, budget int
}

// Limits of the values the loader accepts.
const (
	maxCount     = 1_000_000_000 // slots, tasks, limit slots and jobs
	maxPriority  = 1_000_000_000 // |queue priority|
	maxMergeNest = 16            // nested merge keys / alias chains
	maxStateVals = 1 << 25       // hosts × attribute columns (State size)
)

// spend counts n units of work and fails once the budget is exhausted.
func (l *loader) spend(n int, at ast.Node, path string) error {
	l.work += n
	if l.work > l.budget {
		return l.errAt(at, path, "aliases and merge keys expand the document too much")
	}
	return nil
}

// entry is one key/value pair of a mapping, after merge keys are applied.
type entry struct {
	key  string
	kn   ast.Node // the key node (positions of unknown or missing fields)
	val  ast.Node
	path string
}

// errAt returns a ScenarioError at node n (or without position if n is nil).
func (l *loader) errAt(n ast.Node, path, format string, args ...any) *ScenarioError {
	line, col := pos(n)
	return &ScenarioError{File: l.file, Line: line, Col: col, Path: path, Msg: clipMsg(fmt.Sprintf(format, args...))}
}

// position is a line and column in the file.
type position struct{ line, col int }

// at returns the position of node n (pos), to report an error there
// without keeping the node.
func at(n ast.Node) position {
	line, col := pos(n)
	return position{line, col}
}

// errAtPos returns a ScenarioError at position p.
func (l *loader) errAtPos(p position, path, format string, args ...any) *ScenarioError {
	return &ScenarioError{File: l.file, Line: p.line, Col: p.col, Path: path, Msg: clipMsg(fmt.Sprintf(format, args...))}
}

// pos returns the position of node n: the first key of a block mapping,
// the opening bracket of a flow collection, the first '-' of a block
// sequence, the token of a scalar.
func pos(n ast.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	var tk *token.Token
	switch v := n.(type) {
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0] != nil && v.Values[0].Key != nil {
			return pos(v.Values[0].Key)
		}
		tk = v.Start
	case *ast.MappingValueNode:
		if v.Key != nil {
			return pos(v.Key)
		}
		tk = v.Start
	case *ast.SequenceNode:
		tk = v.Start
	case *ast.AnchorNode:
		tk = v.Start
	case *ast.AliasNode:
		tk = v.Start
	case *ast.TagNode:
		tk = v.Start
	case *ast.LiteralNode:
		tk = v.Start
	default:
		tk = n.GetToken()
	}
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

// before reports whether node a starts before node b.
func before(a, b ast.Node) bool {
	al, ac := pos(a)
	bl, bc := pos(b)
	return al < bl || al == bl && ac < bc
}

// collectAnchors records every anchor of the document, each name's in
// document order.
func (l *loader) collectAnchors(root ast.Node) {
	l.anchors = map[string][]*ast.AnchorNode{}
	ast.Walk(anchorVisitor{l.anchors}, root)
	for _, as := range l.anchors {
		slices.SortStableFunc(as, func(a, b *ast.AnchorNode) int {
			if before(a, b) {
				return -1
			}
			if before(b, a) {
				return 1
			}
			return 0
		})
	}
}

type anchorVisitor struct{ m map[string][]*ast.AnchorNode }

func (v anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		name := a.Name.GetToken()
		if name != nil {
			v.m[name.Value] = append(v.m[name.Value], a)
		}
	}
	return v
}

// resolve follows anchors, aliases and tags down to the node that holds
// the value. str reports a `!!str` tag. A nil result means null.
func (l *loader) resolve(n ast.Node, path string) (res ast.Node, str bool, err error) {
	for range maxMergeNest {
		switch v := n.(type) {
		case nil:
			return nil, str, nil
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			tag := ""
			if v.Start != nil {
				tag = v.Start.Value
			}
			switch tag {
			case "!!str":
				str = true
			case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
			default:
				return nil, false, l.errAt(v, path, "unsupported YAML tag %s", quoteValue(tag))
			}
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if v.Value != nil && v.Value.GetToken() != nil {
				name = v.Value.GetToken().Value
			}
			// The alias refers to the last anchor of that name before it.
			as := l.anchors[name]
			k := sort.Search(len(as), func(i int) bool { return !before(as[i], v) })
			if k == 0 {
				return nil, false, l.errAt(v, path, "alias *%s names no earlier anchor", clipText(name))
			}
			n = as[k-1].Value
		case *ast.NullNode:
			return nil, str, nil
		default:
			return n, str, nil
		}
	}
	return nil, false, l.errAt(n, path, "aliases nested too deeply")
}

// kind describes a resolved node for "expected X, got Y" messages.
func kind(n ast.Node) string {
	switch v := n.(type) {
	case nil:
		return "null"
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number " + clipText(tokenText(n))
	case *ast.BoolNode:
		return "boolean " + tokenText(n)
	case *ast.StringNode:
		return "string " + quoteValue(v.Value)
	case *ast.LiteralNode:
		return "a block string"
	}
	return "a " + n.Type().YAMLName()
}

func tokenText(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return "?"
}

// mapping returns the entries of the mapping at n (nil for null), with
// merge keys (<<) applied: explicit keys win over merged ones, earlier
// merged mappings over later ones. A key given twice is an error.
func (l *loader) mapping(n ast.Node, path string) ([]entry, ast.Node, error) {
	return l.mappingDepth(n, path, 0)
}

func (l *loader) mappingDepth(n ast.Node, path string, depth int) ([]entry, ast.Node, error) {
	r, _, err := l.resolve(n, path)
	if err != nil || r == nil {
		return nil, r, err
	}
	m, ok := r.(*ast.MappingNode)
	if !ok {
		if mv, isMV := r.(*ast.MappingValueNode); isMV {
			// go-yaml returns a lone "key: value" as a MappingValueNode.
			m = &ast.MappingNode{BaseNode: mv.BaseNode, Start: mv.Start, Values: []*ast.MappingValueNode{mv}}
		} else {
			return nil, r, l.errAt(r, path, "expected a mapping, got %s", kind(r))
		}
	}
	if depth > maxMergeNest {
		return nil, m, l.errAt(m, path, "merge keys (<<) nested too deeply (or cyclic)")
	}
	if err := l.spend(len(m.Values), m, path); err != nil {
		return nil, m, err
	}
	explicit := map[string]ast.Node{}
	for _, mv := range m.Values {
		if mv == nil || isMergeKey(mv.Key) {
			continue
		}
		key, kn, err := l.key(mv, path)
		if err != nil {
			return nil, m, err
		}
		if first, dup := explicit[key]; dup {
			fl, fc := pos(first)
			return nil, m, l.errAt(kn, fieldPath(path, key), "duplicate key %s (first at %d:%d)", quoteValue(key), fl, fc)
		}
		explicit[key] = kn
	}
	var out []entry
	seen := map[string]bool{}
	for _, mv := range m.Values {
		if mv == nil {
			continue
		}
		if !isMergeKey(mv.Key) {
			key, kn, _ := l.key(mv, path)
			seen[key] = true
			out = append(out, entry{key: key, kn: kn, val: mv.Value, path: fieldPath(path, key)})
			continue
		}
		srcs := []ast.Node{mv.Value}
		if r, _, err := l.resolve(mv.Value, path); err != nil {
			return nil, m, err
		} else if s, ok := r.(*ast.SequenceNode); ok {
			srcs = s.Values
		}
		for _, src := range srcs {
			merged, mn, err := l.mappingDepth(src, path, depth+1)
			if err != nil {
				return nil, m, err
			}
			if mn == nil {
				return nil, m, l.errAt(mv.Value, path, "merge key (<<) needs a mapping, got null")
			}
			for _, e := range merged {
				if _, isExplicit := explicit[e.key]; !isExplicit && !seen[e.key] {
					seen[e.key] = true
					out = append(out, e)
				}
			}
		}
	}
	return out, m, nil
}

func isMergeKey(k ast.MapKeyNode) bool {
	_, ok := k.(*ast.MergeKeyNode)
	return ok
}

// key returns the string key of mv.
func (l *loader) key(mv *ast.MappingValueNode, path string) (string, ast.Node, error) {
	var kn ast.Node = mv.Key
	if mv.Key == nil {
		return "", mv, l.errAt(mv, path, "mapping entry without a key")
	}
	r, _, err := l.resolve(kn, path)
	if err != nil {
		return "", kn, err
	}
	if mk, ok := r.(*ast.MappingKeyNode); ok { // explicit key: "? key"
		if r, _, err = l.resolve(mk.Value, path); err != nil {
			return "", kn, err
		}
	}
	if s, ok := r.(*ast.StringNode); ok {
		return s.Value, kn, nil
	}
	return "", kn, l.errAt(kn, path, "mapping keys must be strings, got %s", kind(r))
}

// fieldSet is a mapping read against a fixed list of field names.
type fieldSet struct {
	node ast.Node // the mapping (position of missing fields)
	path string
	m    map[string]entry
}

// fields reads the mapping at n, which may only hold the allowed keys.
// A null n gives an empty set.
func (l *loader) fields(n ast.Node, path string, allowed []string) (*fieldSet, error) {
	es, mn, err := l.mapping(n, path)
	if err != nil {
		return nil, err
	}
	fs := &fieldSet{node: mn, path: path, m: make(map[string]entry, len(es))}
	for _, e := range es {
		if !contains(allowed, e.key) {
			return nil, l.errAt(e.kn, e.path, "unknown field %s (known fields: %s)%s", quoteValue(e.key), strings.Join(xceKeys(allowed), ", "), slurmNote(allowed))
		}
		fs.m[e.key] = e
	}
	return fs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether field name is present and not null.
func (l *loader) has(fs *fieldSet, name string) bool {
	e, ok := fs.m[name]
	if !ok {
		return false
	}
	r, _, err := l.resolve(e.val, e.path)
	return err != nil || r != nil
}

// value returns the value node of field name, or the mapping itself when
// the field is absent (for error positions).
func (fs *fieldSet) value(name string) ast.Node {
	if e, ok := fs.m[name]; ok && e.val != nil {
		return e.val
	}
	return fs.node
}

// required returns an error unless field name is present and not null.
func (l *loader) required(fs *fieldSet, name string) error {
	e, ok := fs.m[name]
	if !ok {
		return l.errAt(fs.node, fieldPath(fs.path, name), "missing required field")
	}
	if !l.has(fs, name) {
		return l.errAt(e.val, e.path, "required field is null")
	}
	return nil
}

// sequence returns the items of the list at n (nil for null).
func (l *loader) sequence(n ast.Node, path string) ([]ast.Node, ast.Node, error) {
	r, _, err := l.resolve(n, path)
	if err != nil || r == nil {
		return nil, r, err
	}
	s, ok := r.(*ast.SequenceNode)
	if !ok {
		return nil, r, l.errAt(r, path, "expected a list, got %s", kind(r))
	}
	if err := l.spend(len(s.Values), s, path); err != nil {
		return nil, s, err
	}
	return s.Values, s, nil
}

// fieldPath appends key to path: ".key", or `["key"]` when key holds
// characters other than letters, digits, '_' and '-' or is longer than
// maxQuoted characters (then cut: `["key..."...]`).
func fieldPath(path, key string) string {
	simple := key != "" && len(key) <= maxQuoted
	for _, c := range key {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			simple = false
		}
	}
	switch {
	case !simple:
		return path + "[" + quoteValue(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
