package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// This file walks go-yaml's AST: it resolves anchors, aliases, merge keys
// and tags, reads typed scalars with range checks, and builds field paths.
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
	running   map[int]ast.Node // job index -> its running_on node

	// work counts the mapping entries and list items read; aliases and
	// merge keys may repeat a node, so it is capped (budget) against
	// "billion laughs" inputs.
	work, budget int
}

// Limits of the values the loader accepts.
const (
	maxCount     = 1_000_000_000         // slots, tasks, limit slots and jobs
	maxTime      = 1_000_000_000_000_000 // seconds (submit, start, runtime, estimate)
	maxPriority  = 1_000_000_000         // |queue priority|
	maxMergeNest = 16                    // nested merge keys / alias chains
	maxStateVals = 1 << 25               // hosts × attribute columns (State size)
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
	return &ScenarioError{File: l.file, Line: line, Col: col, Path: path, Msg: fmt.Sprintf(format, args...)}
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
				return nil, false, l.errAt(v, path, "unsupported YAML tag %q", tag)
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
				return nil, false, l.errAt(v, path, "alias *%s names no earlier anchor", name)
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
		return "number " + tokenText(n)
	case *ast.BoolNode:
		return "boolean " + tokenText(n)
	case *ast.StringNode:
		return "string " + strconv.Quote(v.Value)
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
			return nil, m, l.errAt(kn, fieldPath(path, key), "duplicate key %q (first at %d:%d)", key, fl, fc)
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
			return nil, l.errAt(e.kn, e.path, "unknown field %q (known fields: %s)", e.key, strings.Join(allowed, ", "))
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

// intField reads optional integer field name in [lo, hi] (def when absent).
func (l *loader) intField(fs *fieldSet, name string, lo, hi, def int64) (int64, error) {
	e, ok := fs.m[name]
	if !ok || !l.has(fs, name) {
		return def, nil
	}
	return l.toInt(e.val, e.path, lo, hi)
}

// toInt reads an integer in [lo, hi].
func (l *loader) toInt(n ast.Node, path string, lo, hi int64) (int64, error) {
	r, str, err := l.resolve(n, path)
	if err != nil {
		return 0, err
	}
	var v int64
	switch x := r.(type) {
	case *ast.IntegerNode:
		if str {
			break
		}
		switch i := x.Value.(type) {
		case int64:
			v = i
		case uint64:
			if i > math.MaxInt64 {
				return 0, l.errAt(r, path, "integer %s is out of range", tokenText(r))
			}
			v = int64(i)
		}
		return l.checkRange(r, path, v, lo, hi)
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		if !str {
			return 0, l.errAt(r, path, "expected an integer, got %s", kind(r))
		}
	case nil:
		return 0, l.errAt(n, path, "expected an integer, got null")
	case *ast.StringNode:
		if isPlain(x) && numeric(x.Value) {
			if intLike(x.Value) {
				return 0, l.errAt(r, path, "integer %s is out of range", x.Value)
			}
			return 0, l.errAt(r, path, "expected an integer, got number %s", x.Value)
		}
	}
	return 0, l.errAt(r, path, "expected an integer, got %s", kindStr(r, str))
}

func (l *loader) checkRange(n ast.Node, path string, v, lo, hi int64) (int64, error) {
	if v < lo {
		return 0, l.errAt(n, path, "must be >= %d, got %d", lo, v)
	}
	if v > hi {
		return 0, l.errAt(n, path, "must be <= %d, got %d", hi, v)
	}
	return v, nil
}

// kindStr is kind(n), calling a !!str-tagged scalar a string.
func kindStr(n ast.Node, str bool) string {
	if str && n != nil {
		return "string " + strconv.Quote(tokenText(n))
	}
	return kind(n)
}

// toNum reads a finite number >= 0 (integer or float).
func (l *loader) toNum(n ast.Node, path string) (float64, error) {
	r, str, err := l.resolve(n, path)
	if err != nil {
		return 0, err
	}
	var v float64
	switch x := r.(type) {
	case *ast.IntegerNode:
		if str {
			return 0, l.errAt(r, path, "expected a number, got %s", kindStr(r, str))
		}
		switch i := x.Value.(type) {
		case int64:
			v = float64(i)
		case uint64:
			v = float64(i)
		}
	case *ast.FloatNode:
		if str {
			return 0, l.errAt(r, path, "expected a number, got %s", kindStr(r, str))
		}
		v = x.Value
	case *ast.InfinityNode, *ast.NanNode:
		return 0, l.errAt(r, path, "must be a finite number, got %s", tokenText(r))
	case *ast.StringNode:
		if str || !isPlain(x) || !numeric(x.Value) {
			return 0, l.errAt(r, path, "expected a number, got %s", kindStr(r, str))
		}
		f, perr := strconv.ParseFloat(strings.ReplaceAll(x.Value, "_", ""), 64)
		if perr != nil {
			if errors.Is(perr, strconv.ErrRange) {
				return 0, l.errAt(r, path, "number %s is out of range", x.Value)
			}
			return 0, l.errAt(r, path, "expected a number, got %s", kind(r))
		}
		v = f
	case nil:
		return 0, l.errAt(n, path, "expected a number, got null")
	default:
		return 0, l.errAt(r, path, "expected a number, got %s", kindStr(r, str))
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, l.errAt(r, path, "must be a finite number, got %s", tokenText(r))
	}
	if v < 0 {
		return 0, l.errAt(r, path, "must be >= 0, got %s", tokenText(r))
	}
	return v, nil
}

// isPlain reports whether a string scalar was written unquoted.
func isPlain(s *ast.StringNode) bool {
	return s.Token != nil && s.Token.Type == token.StringType
}

// numeric reports whether s looks like a number (digits, sign, point,
// exponent, underscores) that go-yaml left as a string, e.g. 1e3 or an
// integer too large for 64 bits.
func numeric(s string) bool {
	digit := false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case strings.ContainsRune("+-._eE", c):
		default:
			return false
		}
	}
	return digit
}

// intLike reports whether s is an optionally signed run of digits.
func intLike(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.Trim(s, "0123456789_") == ""
}

// toStr reads a string (plain, quoted or block scalar). With a !!str tag
// any scalar is taken as written.
func (l *loader) toStr(n ast.Node, path string) (string, ast.Node, error) {
	r, str, err := l.resolve(n, path)
	if err != nil {
		return "", r, err
	}
	switch x := r.(type) {
	case *ast.StringNode:
		return x.Value, r, nil
	case *ast.LiteralNode:
		if x.Value != nil {
			return x.Value.Value, r, nil
		}
		return "", r, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if str {
			return tokenText(r), r, nil
		}
		if r != nil {
			return "", r, l.errAt(r, path, "expected a string, got %s (quote it: \"%s\")", kind(r), tokenText(r))
		}
	}
	if r == nil && str {
		return "", n, nil
	}
	return "", r, l.errAt(orNode(r, n), path, "expected a string, got %s", kind(r))
}

func orNode(a, b ast.Node) ast.Node {
	if a != nil {
		return a
	}
	return b
}

// strField reads optional string field name (def when absent or null).
func (l *loader) strField(fs *fieldSet, name, def string) (string, ast.Node, error) {
	e, ok := fs.m[name]
	if !ok || !l.has(fs, name) {
		return def, fs.value(name), nil
	}
	return l.toStr(e.val, e.path)
}

// enumField reads optional string field name, one of allowed.
func (l *loader) enumField(fs *fieldSet, name, def string, allowed ...string) (string, error) {
	s, n, err := l.strField(fs, name, def)
	if err != nil {
		return "", err
	}
	if !contains(allowed, s) {
		return "", l.errAt(n, fieldPath(fs.path, name), "must be one of %s, got %q", strings.Join(allowed, ", "), s)
	}
	return s, nil
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

// checkName checks a name of a host, queue, limit, user, project, type or
// model: not empty, no white space or control characters.
func (l *loader) checkName(n ast.Node, path, s string) error {
	if s == "" {
		return l.errAt(n, path, "must not be empty")
	}
	for _, c := range s {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return l.errAt(n, path, "%q: names may not hold white space or control characters", s)
		}
	}
	return nil
}

// checkIdent checks a resource, shared resource or tag name: an identifier
// of the resreq language, [A-Za-z_][A-Za-z0-9_.]*.
func (l *loader) checkIdent(n ast.Node, path, s string) error {
	ok := s != ""
	for i, c := range s {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '.')) {
			ok = false
		}
	}
	if !ok {
		return l.errAt(n, path, "%q is not a valid name: use letters, digits, '_' and '.', starting with a letter or '_'", s)
	}
	return nil
}

// fieldPath appends key to path: ".key", or `["key"]` when key holds
// characters other than letters, digits, '_' and '-'.
func fieldPath(path, key string) string {
	simple := key != ""
	for _, c := range key {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			simple = false
		}
	}
	switch {
	case !simple:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
