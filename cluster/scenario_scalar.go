package cluster

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// This file reads typed scalars of a scenario with their range checks:
// integers, numbers, strings and names.

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
				return 0, l.errAt(r, path, "integer %s is out of range", clipText(tokenText(r)))
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
				return 0, l.errAt(r, path, "integer %s is out of range", clipText(x.Value))
			}
			return 0, l.errAt(r, path, "expected an integer, got number %s", clipText(x.Value))
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
		return "string " + quoteValue(tokenText(n))
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
		return 0, l.errAt(r, path, "must be a finite number, got %s", clipText(tokenText(r)))
	case *ast.StringNode:
		if str || !isPlain(x) || !numeric(x.Value) {
			return 0, l.errAt(r, path, "expected a number, got %s", kindStr(r, str))
		}
		f, perr := strconv.ParseFloat(strings.ReplaceAll(x.Value, "_", ""), 64)
		if perr != nil {
			if errors.Is(perr, strconv.ErrRange) {
				return 0, l.errAt(r, path, "number %s is out of range", clipText(x.Value))
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
		return 0, l.errAt(r, path, "must be a finite number, got %s", clipText(tokenText(r)))
	}
	if v < 0 {
		return 0, l.errAt(r, path, "must be >= 0, got %s", clipText(tokenText(r)))
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
			return "", r, l.errAt(r, path, "expected a string, got %s (quote it: \"%s\")", kind(r), clipText(tokenText(r)))
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
		return "", l.errAt(n, fieldPath(fs.path, name), "must be one of %s, got %s", strings.Join(allowed, ", "), quoteValue(s))
	}
	return s, nil
}

// checkName checks a name of a host, queue, limit, user, project, type or
// model: not empty, no white space or control characters.
func (l *loader) checkName(n ast.Node, path, s string) error {
	if s == "" {
		return l.errAt(n, path, "must not be empty")
	}
	for _, c := range s {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return l.errAt(n, path, "%s: names may not hold white space or control characters", quoteValue(s))
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
		return l.errAt(n, path, "%s is not a valid name: use letters, digits, '_' and '.', starting with a letter or '_'", quoteValue(s))
	}
	return nil
}

// boolField reads true or false into *to when fs has field name (left as
// it is otherwise).
func (l *loader) boolField(fs *fieldSet, name string, to *bool) error {
	if !l.has(fs, name) {
		return nil
	}
	e := fs.m[name]
	r, _, err := l.resolve(e.val, e.path)
	if err != nil {
		return err
	}
	b, ok := r.(*ast.BoolNode)
	if !ok {
		return l.errAt(orNode(r, e.val), e.path, "want true or false, got %s", kind(r))
	}
	*to = b.Value
	return nil
}
