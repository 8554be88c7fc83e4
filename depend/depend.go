// Package depend parses and evaluates job dependency expressions in LSF's
// syntax (IBM Spectrum LSF, bsub -w; "Job dependency scheduling"):
//
//	done(12) && (exit(13, >2) || ended("prep"))
//
// Conditions are done, exit (with an optional exit-code comparison), ended
// and started, on a job ID, an element of an array (12[3]) or a job name
// (quoted, or bare when it does not start with a digit); a job named
// without a condition means done(). They combine with &&, ||, ! and
// parentheses (docs/dependencies.md).
package depend

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of parentheses and '!' (the parser is
// recursive); MaxConditions the conditions of one expression.
const (
	MaxDepth      = 100
	MaxConditions = 1000
)

// MaxIndex is the largest array index a reference may name (jobarray's).
const MaxIndex = 2_147_483_646

// Truth is what a dependency says of its job now.
type Truth uint8

const (
	// Waiting: not satisfied yet, and it may still be.
	Waiting Truth = iota
	// Satisfied: the job may start.
	Satisfied
	// Never: it can never be satisfied (the job it waits for ended the
	// other way); LSF leaves such a job pending until it is killed.
	Never
)

// State is what a condition needs to know of a job it names.
type State uint8

const (
	// Pending: not started (or requeued).
	Pending State = iota
	// Running: started, not ended.
	Running
	// Done: ended with exit code 0 (LSF's DONE).
	Done
	// Exit: ended otherwise: a non-zero exit code, a signal, killed,
	// killed before it started (LSF's EXIT).
	Exit
)

// Job is one job as conditions see it: its state, its exit code (for
// Exit), and whether it ever started.
type Job struct {
	State    State
	ExitCode int
	Started  bool
}

// Ref names the jobs a condition is on: a job ID (Index 0), an element of
// an array (ID and Index), or a name (Name set, ID 0).
type Ref struct {
	ID    int64
	Index int64
	Name  string
}

// String writes r as the parser reads it: 12, 12[3] or "name".
func (r Ref) String() string {
	switch {
	case r.Name != "":
		return `"` + r.Name + `"` // the parser takes a name up to the next quote, raw
	case r.Index != 0:
		return fmt.Sprintf("%d[%d]", r.ID, r.Index)
	}
	return strconv.FormatInt(r.ID, 10)
}

// Lookup returns the jobs r names now; all of them must meet a condition
// (LSF: every job of that name). None means none is known: the condition
// can then never be met.
type Lookup func(r Ref) []Job

// Expr is a parsed dependency expression.
type Expr struct {
	root node
	text string
}

// String returns the expression in canonical form.
func (e *Expr) String() string { return e.text }

// Refs returns every job reference of e, in order of appearance.
func (e *Expr) Refs() []Ref {
	var out []Ref
	e.root.walk(func(c *cond) { out = append(out, c.ref) })
	return out
}

// Eval returns what e says now, looking jobs up with look.
func (e *Expr) Eval(look Lookup) Truth { return e.root.eval(look, nil) }

// EvalMemo is Eval remembering, in m, the truth of each condition it
// evaluates, and taking it from there when an alike condition was
// evaluated before in m's scope (Memo).
func (e *Expr) EvalMemo(look Lookup, m *Memo) Truth { return e.root.eval(look, m) }

// Memo remembers the truth of conditions across many expressions
// evaluated while what their Lookup returns does not change (a scheduling
// cycle's pass over the jobs that wait on others). Alike conditions (the
// same kind, exit code test and jobs named) are evaluated once, so that a
// pass costs what its distinct conditions cost, not what all of them do:
// a thousand jobs that each wait on "a || a || ..." a thousand times on
// a thousand jobs named a cost a thousand lookups, not a billion (issue
// 29). The caller sets the scope before each expression (SetScope) and
// clears the memo (Reset) whenever the jobs may have changed. The zero
// Memo is ready to use.
type Memo struct {
	truth     map[memoKey]Truth
	user, own string
}

// memoKey is a condition in a scope: for a condition on a job name, the
// user whose jobs the name means and whether it is the name of the job
// whose expression it is (which is not among them).
type memoKey struct {
	user    string
	ownName bool
	ref     Ref
	kind    Kind
	hasCode bool
	op      string
	code    int
}

// SetScope sets the scope of the next expressions: names mean user's
// jobs, and the job whose expression it is has name own ("" for none).
// Conditions on job IDs mean the same jobs in every scope.
func (m *Memo) SetScope(user, own string) { m.user, m.own = user, own }

// Reset forgets every truth remembered.
func (m *Memo) Reset() { clear(m.truth) }

// key returns c's key in m's scope.
func (m *Memo) key(c *cond) memoKey {
	k := memoKey{ref: c.ref, kind: c.kind, hasCode: c.hasCode, op: c.op, code: c.code}
	if c.ref.Name != "" {
		k.user, k.ownName = m.user, c.ref.Name == m.own
	}
	return k
}

// Bind returns e with every condition whose jobs have all ended (by look,
// now) replaced by its value, which can no longer change: a copy that
// needs no lookup of those jobs (a forecast simulates a copy of the
// cluster that holds no ended job). Its canonical form is e's.
func (e *Expr) Bind(look Lookup) *Expr {
	return &Expr{root: bind(e.root, look), text: e.text}
}

func bind(n node, look Lookup) node {
	switch x := n.(type) {
	case and:
		return and{bind(x.l, look), bind(x.r, look)}
	case or:
		return or{bind(x.l, look), bind(x.r, look)}
	case not:
		return not{bind(x.x, look)}
	case *cond:
		jobs := look(x.ref)
		for _, j := range jobs {
			if j.State != Done && j.State != Exit {
				return x
			}
		}
		if len(jobs) == 0 {
			return x
		}
		return bound{x, x.eval(look, nil)}
	}
	return n
}

// bound is a condition whose value is final.
type bound struct {
	c *cond
	t Truth
}

func (b bound) eval(Lookup, *Memo) Truth  { return b.t }
func (b bound) walk(f func(*cond))        { f(b.c) }
func (b bound) write(sb *strings.Builder) { b.c.write(sb) }

// Unmet returns the first condition of e (in reading order) that is not
// satisfied now, in canonical form ("done(12)"), or "" when e is.
func (e *Expr) Unmet(look Lookup) string { return unmet(e.root, look, nil) }

// UnmetMemo is Unmet with the truths of m (EvalMemo).
func (e *Expr) UnmetMemo(look Lookup, m *Memo) string { return unmet(e.root, look, m) }

func unmet(n node, look Lookup, m *Memo) string {
	switch x := n.(type) {
	case and:
		return cmp.Or(unmet(x.l, look, m), unmet(x.r, look, m))
	case or:
		return cmp.Or(unmet(x.l, look, m), unmet(x.r, look, m))
	case not:
		return unmet(x.x, look, m)
	case bound:
		if x.t != Satisfied {
			return x.c.String()
		}
	case *cond:
		if x.eval(look, m) != Satisfied {
			return x.String()
		}
	}
	return ""
}

type node interface {
	eval(Lookup, *Memo) Truth
	walk(func(*cond))
	// write appends the canonical form (linear in the expression's size).
	write(b *strings.Builder)
}

type and struct{ l, r node }
type or struct{ l, r node }
type not struct{ x node }

func (n and) eval(look Lookup, m *Memo) Truth {
	a, b := n.l.eval(look, m), n.r.eval(look, m)
	switch {
	case a == Never || b == Never:
		return Never
	case a == Satisfied && b == Satisfied:
		return Satisfied
	}
	return Waiting
}

func (n or) eval(look Lookup, m *Memo) Truth {
	a, b := n.l.eval(look, m), n.r.eval(look, m)
	switch {
	case a == Satisfied || b == Satisfied:
		return Satisfied
	case a == Never && b == Never:
		return Never
	}
	return Waiting
}

// eval of !x: a condition once met stays met (a job's end is final), so
// !x is Never once x holds, and holds while x does not (LSF's !).
func (n not) eval(look Lookup, m *Memo) Truth {
	if n.x.eval(look, m) == Satisfied {
		return Never
	}
	return Satisfied
}

func (n and) walk(f func(*cond)) { n.l.walk(f); n.r.walk(f) }
func (n or) walk(f func(*cond))  { n.l.walk(f); n.r.walk(f) }
func (n not) walk(f func(*cond)) { n.x.walk(f) }

func (n and) write(b *strings.Builder) { wrap(b, n.l, 1); b.WriteString(" && "); wrap(b, n.r, 1) }
func (n or) write(b *strings.Builder)  { wrap(b, n.l, 0); b.WriteString(" || "); wrap(b, n.r, 0) }
func (n not) write(b *strings.Builder) { b.WriteByte('!'); wrap(b, n.x, 2) }

// wrap writes x, in parentheses when it binds more loosely than the
// context (0: ||, 1: &&, 2: !).
func wrap(b *strings.Builder, x node, ctx int) {
	p := 3
	switch x.(type) {
	case or:
		p = 0
	case and:
		p = 1
	}
	if p < ctx {
		b.WriteByte('(')
		x.write(b)
		b.WriteByte(')')
		return
	}
	x.write(b)
}

// Kind is a condition's name.
type Kind uint8

// Conditions.
const (
	KindDone Kind = iota
	KindExit
	KindEnded
	KindStarted
)

var kindNames = [...]string{KindDone: "done", KindExit: "exit", KindEnded: "ended", KindStarted: "started"}

// cond is one condition on the jobs ref names; for exit, op and code when
// hasCode.
type cond struct {
	kind    Kind
	ref     Ref
	hasCode bool
	op      string
	code    int
}

func (c *cond) walk(f func(*cond)) { f(c) }

func (c *cond) String() string {
	var b strings.Builder
	c.write(&b)
	return b.String()
}

func (c *cond) write(b *strings.Builder) {
	b.WriteString(kindNames[c.kind])
	b.WriteByte('(')
	b.WriteString(c.ref.String())
	if c.hasCode {
		b.WriteString(", ")
		b.WriteString(c.op)
		b.WriteString(strconv.Itoa(c.code))
	}
	b.WriteByte(')')
}

// eval: every job the reference names must meet the condition; with m,
// once per alike condition of m's scope.
func (c *cond) eval(look Lookup, m *Memo) Truth {
	if m == nil {
		return c.evalJobs(look)
	}
	k := m.key(c)
	if t, ok := m.truth[k]; ok {
		return t
	}
	t := c.evalJobs(look)
	if m.truth == nil {
		m.truth = map[memoKey]Truth{}
	}
	m.truth[k] = t
	return t
}

// evalJobs evaluates c on the jobs look gives.
func (c *cond) evalJobs(look Lookup) Truth {
	jobs := look(c.ref)
	if len(jobs) == 0 {
		return Never
	}
	t := Satisfied
	for _, j := range jobs {
		switch c.one(j) {
		case Never:
			return Never
		case Waiting:
			t = Waiting
		}
	}
	return t
}

// one evaluates the condition on one job.
func (c *cond) one(j Job) Truth {
	ended := j.State == Done || j.State == Exit
	switch c.kind {
	case KindDone:
		switch j.State {
		case Done:
			return Satisfied
		case Exit:
			return Never
		}
	case KindExit:
		switch {
		case j.State == Done:
			return Never
		case j.State == Exit && (!c.hasCode || compare(j.ExitCode, c.op, c.code)):
			return Satisfied
		case j.State == Exit:
			return Never
		}
	case KindEnded:
		if ended {
			return Satisfied
		}
	case KindStarted:
		switch {
		case j.State == Running || ended && j.Started:
			return Satisfied
		case ended:
			return Never // ended without ever starting (killed while pending)
		}
	}
	return Waiting
}

func compare(a int, op string, b int) bool {
	switch op {
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case "!=":
		return a != b
	}
	return a == b
}

// Error is a syntax error; Col is the 1-based byte column of the offending
// character (just past the end for an unexpected end).
type Error struct {
	Col int
	Msg string
}

// Error returns "depend: col <Col>: <Msg>".
func (e *Error) Error() string { return fmt.Sprintf("depend: col %d: %s", e.Col, e.Msg) }

// Parse reads a dependency expression. Its time is linear in len(s) and
// its nesting at most MaxDepth. Errors are *Error.
func Parse(s string) (*Expr, error) {
	p := &parser{s: s}
	p.skip()
	if p.pos == len(s) {
		return nil, p.errf(p.pos, "empty dependency expression")
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.pos < len(s) {
		return nil, p.errf(p.pos, "unexpected %q", p.peekWord())
	}
	var b strings.Builder
	root.write(&b)
	return &Expr{root: root, text: b.String()}, nil
}

type parser struct {
	s     string
	pos   int
	conds int // conditions read so far
}

func (p *parser) errf(at int, format string, args ...any) *Error {
	return &Error{Col: at + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// peekWord returns what starts at pos, for messages: up to 20 bytes.
func (p *parser) peekWord() string {
	w := p.s[p.pos:]
	if len(w) > 20 {
		w = w[:20] + "..."
	}
	return w
}

func (p *parser) accept(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.accept("||") {
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = or{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.accept("&&") {
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = and{l, r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (node, error) {
	p.skip()
	if depth > MaxDepth {
		return nil, p.errf(p.pos, "nested more than %d deep", MaxDepth)
	}
	if p.pos < len(p.s) && p.s[p.pos] == '!' && !strings.HasPrefix(p.s[p.pos:], "!=") {
		p.pos++
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return not{x}, nil
	}
	if p.accept("(") {
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.accept(")") {
			return nil, p.errf(p.pos, "expected ')'")
		}
		return x, nil
	}
	return p.condition()
}

// condition reads kind(ref[, [op]code]) or a bare ref (done).
func (p *parser) condition() (node, error) {
	p.skip()
	start := p.pos
	if p.conds++; p.conds > MaxConditions {
		return nil, p.errf(start, "more than %d conditions", MaxConditions)
	}
	if p.pos == len(p.s) {
		return nil, p.errf(p.pos, "expected a condition (done, exit, ended, started) or a job")
	}
	word := p.ident()
	if word != "" && p.accept("(") {
		kind := -1
		for k, n := range kindNames {
			if n == word {
				kind = k
			}
		}
		if kind < 0 {
			return nil, p.errf(start, "unknown condition %q (expected done, exit, ended or started)", word)
		}
		c := &cond{kind: Kind(kind)}
		var err error
		if c.ref, err = p.ref(); err != nil {
			return nil, err
		}
		if p.accept(",") {
			if c.kind != KindExit {
				return nil, p.errf(p.pos-1, "only exit() takes an exit code")
			}
			if err := p.exitCode(c); err != nil {
				return nil, err
			}
		}
		if !p.accept(")") {
			return nil, p.errf(p.pos, "expected ')' after the job")
		}
		return c, nil
	}
	p.pos = start
	ref, err := p.ref()
	if err != nil {
		return nil, err
	}
	return &cond{kind: KindDone, ref: ref}, nil
}

// ident reads a bare name: a letter or _ first, then letters, digits,
// _ . and -.
func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !(letter || p.pos > start && (c >= '0' && c <= '9' || c == '.' || c == '-')) {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// ref reads a job ID (with an optional [index]), a quoted name or a bare
// name.
func (p *parser) ref() (Ref, error) {
	p.skip()
	start := p.pos
	switch {
	case p.pos < len(p.s) && p.s[p.pos] == '"':
		end := strings.IndexByte(p.s[p.pos+1:], '"')
		if end < 0 {
			return Ref{}, p.errf(start, "unterminated job name")
		}
		name := p.s[p.pos+1 : p.pos+1+end]
		if name == "" {
			return Ref{}, p.errf(start, "empty job name")
		}
		p.pos += end + 2
		return Ref{Name: name}, nil
	case p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9':
		id, err := p.number(1)
		if err != nil {
			return Ref{}, err
		}
		r := Ref{ID: id}
		if p.pos < len(p.s) && p.s[p.pos] == '[' {
			p.pos++
			if strings.HasPrefix(p.s[p.pos:], "*]") {
				return Ref{}, p.errf(p.pos, "[*] (one-to-one array dependencies) is not supported")
			}
			at := p.pos
			if r.Index, err = p.number(1); err != nil {
				return Ref{}, err
			}
			if r.Index > MaxIndex {
				return Ref{}, p.errf(at, "array index %d is above %d", r.Index, MaxIndex)
			}
			if p.pos >= len(p.s) || p.s[p.pos] != ']' {
				return Ref{}, p.errf(p.pos, "expected ']' after the array index")
			}
			p.pos++
		}
		return r, nil
	}
	if name := p.ident(); name != "" {
		return Ref{Name: name}, nil
	}
	if p.pos == len(p.s) {
		return Ref{}, p.errf(p.pos, "expected a job ID or name")
	}
	return Ref{}, p.errf(p.pos, "expected a job ID or name, got %q", p.peekWord())
}

// number reads a whole number of at least lo (an ID, an index).
func (p *parser) number(lo int64) (int64, error) {
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
	if start == p.pos || err != nil || n < lo {
		return 0, p.errf(start, "expected a whole number from %d up, got %q", lo, p.s[start:p.pos])
	}
	return n, nil
}

// exitCode reads [op] code after exit(job,.
func (p *parser) exitCode(c *cond) error {
	p.skip()
	c.hasCode, c.op = true, "=="
	for _, op := range []string{">=", "<=", "==", "!=", ">", "<"} {
		if strings.HasPrefix(p.s[p.pos:], op) {
			c.op = op
			p.pos += len(op)
			break
		}
	}
	p.skip()
	neg := p.pos < len(p.s) && p.s[p.pos] == '-'
	if neg {
		p.pos++
	}
	start := p.pos
	n, err := p.number(0)
	if err != nil || n > 255 {
		return p.errf(start, "expected an exit code from 0 to 255")
	}
	c.code = int(n)
	if neg {
		return p.errf(start-1, "expected an exit code from 0 to 255")
	}
	return nil
}
