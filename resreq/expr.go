package resreq

// Expr is a node of a select expression. The concrete types are Ident,
// Number, StringLit, Defined, Unary and Binary. String renders the node in
// canonical form.
type Expr interface {
	String() string
	exprNode()
}

// Ident is a bare name: an attribute (`mem`, `type`, `gpu`) or, when compared
// with a string attribute, a string constant (`type==X86_64`). Col is the
// 1-based column of its first character in the resreq string.
type Ident struct {
	Name string
	Col  int
}

// Number is a numeric literal.
type Number struct {
	Value float64
}

// StringLit is a quoted string constant ("X86_64" or 'X86_64').
type StringLit struct {
	Value string
}

// Defined is `defined(name)`: true when the host defines the attribute.
type Defined struct {
	Name string
	Col  int
}

// Op is a select operator.
type Op uint8

// The operators, from the lowest precedence group to the highest:
// || ; && ; == != < <= > >= ; + - ; * / ; unary ! and -.
const (
	OpOr Op = iota + 1
	OpAnd
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpNot
	OpNeg
)

// Unary is `!X` (OpNot) or `-X` (OpNeg).
type Unary struct {
	Op Op
	X  Expr
}

// Binary is `X op Y` for every binary Op.
type Binary struct {
	Op   Op
	X, Y Expr
}

func (*Ident) exprNode()     {}
func (*Number) exprNode()    {}
func (*StringLit) exprNode() {}
func (*Defined) exprNode()   {}
func (*Unary) exprNode()     {}
func (*Binary) exprNode()    {}
