package resreq

// Requirement is a parsed resource requirement string: one or more
// alternatives (`{...} || {...}`), tried in order. A string without `||` has
// exactly one alternative.
type Requirement struct {
	Alternatives []*Compound
}

// Compound is one alternative: one or more terms. A simple (non-compound)
// requirement is a Compound with a single Term whose Count is 0, meaning
// "all of the job's tasks".
type Compound struct {
	Terms []*Term
}

// Term is one simple resource requirement: the sections of `select[] order[]
// rusage[] span[] same[]`, each optional, plus the task count of a compound
// term (`n*{...}`). Count is 0 for a simple requirement and for a compound
// term whose count was omitted (then it takes the tasks the other terms leave).
type Term struct {
	Count  int
	Select Expr       // nil when the term has no select section
	Order  []OrderKey // empty when the term has no order section
	Rusage []Rusage   // in source order; names are unique within a term
	Span   Span
	Same   []string // attribute names; empty when the term has no same section
}

// OrderKey is one key of `order[]`: a numeric attribute, ascending unless
// Desc (written with a leading '-').
type OrderKey struct {
	Name string
	Desc bool
}

// Rusage is one `name=value` entry of `rusage[]`. For a host resource the
// value is reserved per task slot (mem in MB); for a shared resource it is
// reserved once per job.
type Rusage struct {
	Name  string
	Value float64
}

// SpanKind says how a term's tasks may be spread over hosts.
type SpanKind uint8

const (
	// SpanNone: no span section; tasks spread over as many hosts as needed.
	SpanNone SpanKind = iota
	// SpanHostsOne: `span[hosts=1]`, all tasks on one host.
	SpanHostsOne
	// SpanHostsAny: `span[hosts=-1]`, explicitly spread as needed (same
	// placement as SpanNone; kept distinct so String() round-trips).
	SpanHostsAny
	// SpanPtile: `span[ptile=N]`, at most Ptile tasks per host.
	SpanPtile
)

// Span is a term's `span[]` section. Ptile is set only for SpanPtile (>= 1).
type Span struct {
	Kind  SpanKind
	Ptile int
}
