package resreq

import "slices"

// Limits on the size of a resource requirement. Real requests are a few
// hundred bytes; these bounds are far above that and keep every walk over a
// parsed string (Parse, CompileSelect, String, Select.Match) bounded in
// stack depth, and Parse and CompileSelect linear in time and memory. An
// input past a limit gets an *Error naming the limit (docs/resreq.md §3,
// Limits).
const (
	// MaxDepth is the deepest nesting of parentheses and unary operators
	// (! and -) in one select expression: `((a))` and `!-a` nest 2 deep.
	// Parse fails with "select[]: nesting deeper than 200" at the '(' or
	// unary operator that goes one level deeper.
	MaxDepth = 200
	// MaxTerms is the most operands (identifiers, numbers, strings,
	// defined(x)) one select expression may have: `mem > 1 && gpu` has 3.
	// Parse fails with "select[]: more than 1024 terms" at the first
	// operand past the limit.
	MaxTerms = 1024
	// MaxItems is the most items of each list of the language: keys of one
	// order[], entries of one rusage[], names of one same[], terms of one
	// compound, alternatives of one requirement. Parse fails with, e.g.,
	// "rusage[]: more than 1024 entries" or "more than 1024 alternatives"
	// at the first item past the limit.
	MaxItems = 1024
)

// smallSet is the length up to which nameSet scans a slice; past it, a map.
const smallSet = 8

// nameSet finds duplicate names in a list in constant time per name (a
// scan of at most smallSet names, or a map probe). work counts the names
// compared and the map probes, for the complexity tests.
type nameSet struct {
	small []string
	big   map[string]struct{}
	work  *int
}

// add records name and reports whether it was new.
func (s *nameSet) add(name string) bool {
	if s.big != nil {
		*s.work++
		if _, dup := s.big[name]; dup {
			return false
		}
		s.big[name] = struct{}{}
		return true
	}
	*s.work += len(s.small)
	if slices.Contains(s.small, name) {
		return false
	}
	if len(s.small) < smallSet {
		s.small = append(s.small, name)
		return true
	}
	s.big = make(map[string]struct{}, 2*smallSet)
	*s.work += len(s.small)
	for _, n := range s.small {
		s.big[n] = struct{}{}
	}
	s.big[name] = struct{}{}
	s.small = nil
	return true
}
