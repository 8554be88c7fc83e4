package resreq

import "math"

// Parse parses a resource requirement string (docs/resreq.md):
//
//	simple:       [expr] section...   sections select[...] order[...]
//	              rusage[...] span[...] same[...], any order, each at most once
//	compound:     n*{simple} + m*{simple} ... [+ {simple}]
//	alternatives: {simple or compound} || {simple or compound} ...
//
// A leading select expression may omit "select[...]". The empty (or
// all-whitespace) string is valid: one alternative of one empty term.
// Slices of absent sections are nil.
//
// On a syntax error Parse returns a nil Requirement and an *Error whose Col
// is the 1-based byte column of the offending token (len(s)+1 for an
// unexpected end of input). Parse never panics.
//
// Parse enforces MaxDepth, MaxTerms and MaxItems (limits.go); it takes time
// and memory linear in len(s).
func Parse(s string) (*Requirement, error) {
	r, _, err := parse(s)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// parse is Parse that also returns the work done: the tokens scanned plus
// the names compared or probed by the duplicate checks.
func parse(s string) (*Requirement, int, *Error) {
	p := &parser{lx: lexer{src: s}}
	r, err := p.requirement()
	return r, p.lx.scanned + p.work, err
}

// maxInt is the largest count or ptile Parse accepts.
const maxInt = math.MaxInt32

type parser struct {
	lx    lexer
	depth int // nesting of parentheses and unary operators (MaxDepth)
	terms int // operands of the current select expression (MaxTerms)
	work  int // names compared or probed by duplicate checks
}

func (p *parser) peek(k int) token { return p.lx.peek(k) }
func (p *parser) next() token      { return p.lx.next() }

// fail reports msg at token t, unless t is a lexical error, which then
// takes precedence.
func (p *parser) fail(t token, format string, args ...any) *Error {
	if t.kind == tokErr {
		return &Error{Col: t.col(), Msg: t.text}
	}
	return errorf(t.col(), format, args...)
}

// describe names a token for messages.
func (p *parser) describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIdent:
		return `"` + t.text + `"`
	case tokNumber:
		return "number " + t.text
	case tokString:
		return "string"
	}
	end := t.pos + 1
	if op2(p.lx.src[t.pos], byteAt(p.lx.src, t.pos+1)) != 0 {
		end++
	}
	return "'" + p.lx.src[t.pos:end] + "'"
}

func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func (p *parser) requirement() (*Requirement, *Error) {
	t := p.peek(0)
	switch {
	case t.kind == tokLBrace:
		alts, err := p.alternatives()
		if err != nil {
			return nil, err
		}
		if end := p.peek(0); end.kind != tokEOF {
			return nil, p.fail(end, "expected '||' or end of input")
		}
		return &Requirement{Alternatives: alts}, nil
	case p.compoundStart():
		c, err := p.compound()
		if err != nil {
			return nil, err
		}
		if end := p.peek(0); end.kind != tokEOF {
			return nil, p.fail(end, "expected '+' or end of input")
		}
		return &Requirement{Alternatives: []*Compound{c}}, nil
	}
	term, err := p.simple()
	if err != nil {
		return nil, err
	}
	if end := p.peek(0); end.kind != tokEOF {
		return nil, p.fail(end, "unexpected '}'")
	}
	return &Requirement{Alternatives: []*Compound{{Terms: []*Term{term}}}}, nil
}

// compoundStart reports whether the next tokens are `number * {`.
func (p *parser) compoundStart() bool {
	return p.peek(0).kind == tokNumber && p.peek(1).kind == tokStar && p.peek(2).kind == tokLBrace
}

// alternatives parses `{X} || {Y} ...`; the next token is '{'.
func (p *parser) alternatives() ([]*Compound, *Error) {
	var alts []*Compound
	for {
		open := p.next()
		if open.kind != tokLBrace {
			return nil, p.fail(open, "expected '{' after '||'")
		}
		if len(alts) == MaxItems {
			return nil, p.fail(open, "more than %d alternatives", MaxItems)
		}
		var c *Compound
		if p.compoundStart() {
			var err *Error
			if c, err = p.compound(); err != nil {
				return nil, err
			}
		} else {
			term, err := p.simple()
			if err != nil {
				return nil, err
			}
			c = &Compound{Terms: []*Term{term}}
		}
		if rb := p.next(); rb.kind != tokRBrace {
			return nil, p.fail(rb, "expected '}' after alternative")
		}
		alts = append(alts, c)
		if p.peek(0).kind != tokOr {
			return alts, nil
		}
		p.next()
	}
}

// compound parses `n*{simple} + ... [+ {simple}]`; the first term has a count.
func (p *parser) compound() (*Compound, *Error) {
	c := &Compound{}
	for {
		t := p.next()
		if len(c.Terms) == MaxItems {
			return nil, p.fail(t, "more than %d compound terms", MaxItems)
		}
		count := 0
		lbrace := t
		switch t.kind {
		case tokNumber:
			var err *Error
			if count, err = p.intValue(t, t, "count"); err != nil {
				return nil, err
			}
			if star := p.next(); star.kind != tokStar {
				return nil, p.fail(star, "expected '*' after term count")
			}
			if lbrace = p.next(); lbrace.kind != tokLBrace {
				return nil, p.fail(lbrace, "expected '{' after '*'")
			}
		case tokLBrace:
		default:
			return nil, p.fail(t, "expected term count or '{' after '+'")
		}
		term, err := p.simple()
		if err != nil {
			return nil, err
		}
		term.Count = count
		if rb := p.next(); rb.kind != tokRBrace {
			return nil, p.fail(rb, "expected '}' after compound term")
		}
		c.Terms = append(c.Terms, term)
		if p.peek(0).kind != tokPlus {
			return c, nil
		}
		if count == 0 {
			return nil, p.fail(lbrace, "only the last compound term may omit its count")
		}
		p.next()
	}
}

// intValue checks that number token t (whose sign, if any, is at token
// first) holds an integer in 1..maxInt.
func (p *parser) intValue(first, t token, what string) (int, *Error) {
	v := t.num
	if first.kind == tokMinus {
		v = -v
	}
	switch {
	case v != math.Trunc(v):
		return 0, p.fail(first, "%s must be an integer", what)
	case v < 1:
		return 0, p.fail(first, "%s must be >= 1", what)
	case v > maxInt:
		return 0, p.fail(first, "%s too large", what)
	}
	return int(v), nil
}

// Section indices, in canonical order.
const (
	secSelect = iota
	secOrder
	secRusage
	secSpan
	secSame
	numSections
)

// sectionIndex returns the index of section keyword name, or -1.
func sectionIndex(name string) int {
	switch name {
	case "select":
		return secSelect
	case "order":
		return secOrder
	case "rusage":
		return secRusage
	case "span":
		return secSpan
	case "same":
		return secSame
	}
	return -1
}

// simple parses the sections of one term, up to end of input or '}'.
func (p *parser) simple() (*Term, *Error) {
	term := &Term{}
	var seen [numSections]bool
	for first := true; ; first = false {
		t := p.peek(0)
		switch t.kind {
		case tokEOF, tokRBrace:
			return term, nil
		case tokErr:
			return nil, p.fail(t, "")
		}
		idx := -1
		if t.kind == tokIdent {
			idx = sectionIndex(t.text)
		}
		if t.kind == tokIdent && p.peek(1).kind == tokLBrack {
			if idx < 0 {
				if t.text == "cu" || t.text == "affinity" {
					return nil, p.fail(t, "unsupported section %q", t.text)
				}
				return nil, p.fail(t, "unknown section %q", t.text)
			}
			if seen[idx] {
				return nil, p.fail(t, "duplicate section %q", t.text)
			}
			seen[idx] = true
			p.next()
			p.next()
			if err := p.section(idx, term); err != nil {
				return nil, err
			}
			continue
		}
		if first && startsExpr(t) {
			e, err := p.selectExpr()
			if err != nil {
				return nil, err
			}
			term.Select = e
			seen[secSelect] = true
			if t := p.peek(0); t.kind != tokIdent && t.kind != tokEOF && t.kind != tokRBrace {
				return nil, p.fail(t, "expected operator or section after select expression, found %s", p.describe(t))
			}
			continue
		}
		switch {
		case idx >= 0:
			return nil, p.fail(p.peek(1), "expected '[' after %q", t.text)
		case t.kind == tokIdent:
			return nil, p.fail(t, "unknown section %q", t.text)
		}
		return nil, p.fail(t, "expected section, found %s", p.describe(t))
	}
}

func startsExpr(t token) bool {
	switch t.kind {
	case tokIdent, tokNumber, tokString, tokLParen, tokNot, tokMinus:
		return true
	}
	return false
}

// section parses the body of section idx after its '['.
func (p *parser) section(idx int, term *Term) *Error {
	switch idx {
	case secSelect:
		e, err := p.selectExpr()
		if err != nil {
			return err
		}
		if rb := p.next(); rb.kind != tokRBrack {
			return p.fail(rb, "expected ']' after select expression")
		}
		term.Select = e
		return nil
	case secOrder:
		seen := nameSet{work: &p.work}
		return p.list("order", func(t token) *Error {
			desc := false
			if t.kind == tokMinus {
				desc = true
				t = p.next()
			}
			if t.kind != tokIdent {
				return p.fail(t, "expected attribute name in order section")
			}
			if !seen.add(t.text) {
				return p.fail(t, "duplicate order key %q", t.text)
			}
			term.Order = append(term.Order, OrderKey{Name: t.text, Desc: desc})
			return nil
		})
	case secRusage:
		seen := nameSet{work: &p.work}
		return p.list("rusage", func(t token) *Error {
			r, err := p.rusage(t, &seen)
			if err == nil {
				term.Rusage = append(term.Rusage, r)
			}
			return err
		})
	case secSpan:
		return p.span(term)
	default: // same
		seen := nameSet{work: &p.work}
		return p.list("same", func(t token) *Error {
			if t.kind != tokIdent {
				return p.fail(t, "expected attribute name in same section")
			}
			if !seen.add(t.text) {
				return p.fail(t, "duplicate attribute %q in same section", t.text)
			}
			term.Same = append(term.Same, t.text)
			return nil
		})
	}
}

// list parses `item (':' item)* ']'`; rusage also accepts ',' as separator.
// item is called with the first token of each item, already consumed; at
// most MaxItems items.
func (p *parser) list(name string, item func(token) *Error) *Error {
	for n := 0; ; n++ {
		t := p.next()
		if n == MaxItems {
			return p.fail(t, "%s[]: more than %d entries", name, MaxItems)
		}
		if err := item(t); err != nil {
			return err
		}
		sep := p.next()
		switch {
		case sep.kind == tokRBrack:
			return nil
		case sep.kind == tokColon, sep.kind == tokComma && name == "rusage":
			continue
		}
		return p.fail(sep, "expected ':' or ']' in %s section", name)
	}
}

// rusage parses `name=value` whose first token t is consumed; seen holds
// the names before it.
func (p *parser) rusage(t token, seen *nameSet) (Rusage, *Error) {
	if t.kind != tokIdent {
		return Rusage{}, p.fail(t, "expected resource name in rusage section")
	}
	if t.text == "duration" || t.text == "decay" {
		return Rusage{}, p.fail(t, "unsupported rusage keyword %q", t.text)
	}
	if !seen.add(t.text) {
		return Rusage{}, p.fail(t, "duplicate rusage resource %q", t.text)
	}
	if eq := p.next(); eq.kind != tokAssign {
		return Rusage{}, p.fail(eq, "expected '=' after rusage name")
	}
	v := p.next()
	if v.kind == tokMinus {
		return Rusage{}, p.fail(v, "rusage value must be >= 0")
	}
	if v.kind != tokNumber {
		return Rusage{}, p.fail(v, "expected number after '='")
	}
	return Rusage{Name: t.text, Value: v.num}, nil
}

// span parses `hosts=1]`, `hosts=-1]` or `ptile=N]`.
func (p *parser) span(term *Term) *Error {
	key := p.next()
	if key.kind != tokIdent || (key.text != "hosts" && key.text != "ptile") {
		return p.fail(key, `expected "hosts" or "ptile" in span section`)
	}
	if eq := p.next(); eq.kind != tokAssign {
		return p.fail(eq, "expected '=' after %q", key.text)
	}
	first := p.next()
	v := first
	if first.kind == tokMinus {
		v = p.next()
	}
	if v.kind != tokNumber {
		return p.fail(v, "expected number after '='")
	}
	if key.text == "hosts" {
		switch {
		case v.num == 1 && first.kind != tokMinus:
			term.Span = Span{Kind: SpanHostsOne}
		case v.num == 1:
			term.Span = Span{Kind: SpanHostsAny}
		default:
			return p.fail(first, "hosts must be 1 or -1")
		}
	} else {
		n, err := p.intValue(first, v, "ptile")
		if err != nil {
			return err
		}
		term.Span = Span{Kind: SpanPtile, Ptile: n}
	}
	if rb := p.next(); rb.kind != tokRBrack {
		return p.fail(rb, "expected ']' after span value")
	}
	return nil
}
