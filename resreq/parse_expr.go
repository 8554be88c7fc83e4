package resreq

// Select expressions, by precedence climbing from the lowest group:
//
//	or    = and { "||" and }
//	and   = cmp { "&&" cmp }
//	cmp   = add [ ("=="|"="|"!="|"<"|"<="|">"|">=") add ]   (no chaining)
//	add   = mul { ("+"|"-") mul }
//	mul   = unary { ("*"|"/") unary }
//	unary = ("!"|"-") unary | primary
//	primary = ident | number | string | "defined" "(" ident ")" | "(" or ")"

// selectExpr parses one select expression, with its own MaxDepth and
// MaxTerms budget.
func (p *parser) selectExpr() (Expr, *Error) {
	p.depth, p.terms = 0, 0
	return p.or()
}

func (p *parser) or() (Expr, *Error) {
	return p.leftAssoc(p.and, func(k tokKind) Op {
		if k == tokOr {
			return OpOr
		}
		return 0
	})
}

func (p *parser) and() (Expr, *Error) {
	return p.leftAssoc(p.cmp, func(k tokKind) Op {
		if k == tokAnd {
			return OpAnd
		}
		return 0
	})
}

func (p *parser) add() (Expr, *Error) {
	return p.leftAssoc(p.mul, func(k tokKind) Op {
		switch k {
		case tokPlus:
			return OpAdd
		case tokMinus:
			return OpSub
		}
		return 0
	})
}

func (p *parser) mul() (Expr, *Error) {
	return p.leftAssoc(p.unary, func(k tokKind) Op {
		switch k {
		case tokStar:
			return OpMul
		case tokSlash:
			return OpDiv
		}
		return 0
	})
}

// leftAssoc parses `operand { op operand }` into a left-leaning tree; op
// maps a token kind to its operator in this group, or 0.
func (p *parser) leftAssoc(operand func() (Expr, *Error), op func(tokKind) Op) (Expr, *Error) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		o := op(p.peek(0).kind)
		if o == 0 {
			return x, nil
		}
		p.next()
		y, err := operand()
		if err != nil {
			return nil, err
		}
		x = &Binary{Op: o, X: x, Y: y}
	}
}

// cmpOp maps a comparison token to its operator; LSF's `=` means `==`.
func cmpOp(k tokKind) Op {
	switch k {
	case tokEq, tokAssign:
		return OpEq
	case tokNe:
		return OpNe
	case tokLt:
		return OpLt
	case tokLe:
		return OpLe
	case tokGt:
		return OpGt
	case tokGe:
		return OpGe
	}
	return 0
}

func (p *parser) cmp() (Expr, *Error) {
	x, err := p.add()
	if err != nil {
		return nil, err
	}
	o := cmpOp(p.peek(0).kind)
	if o == 0 {
		return x, nil
	}
	p.next()
	y, err := p.add()
	if err != nil {
		return nil, err
	}
	if t := p.peek(0); cmpOp(t.kind) != 0 {
		return nil, p.fail(t, "comparisons cannot be chained; use parentheses")
	}
	return &Binary{Op: o, X: x, Y: y}, nil
}

func (p *parser) unary() (Expr, *Error) {
	t := p.peek(0)
	var o Op
	switch t.kind {
	case tokNot:
		o = OpNot
	case tokMinus:
		o = OpNeg
	default:
		return p.primary()
	}
	p.next()
	if err := p.enter(t); err != nil {
		return nil, err
	}
	x, err := p.unary()
	p.depth--
	if err != nil {
		return nil, err
	}
	return &Unary{Op: o, X: x}, nil
}

// enter counts one level of nesting at token t.
func (p *parser) enter(t token) *Error {
	p.depth++
	if p.depth > MaxDepth {
		return p.fail(t, "select[]: nesting deeper than %d", MaxDepth)
	}
	return nil
}

// operand counts one operand at token t.
func (p *parser) operand(t token) *Error {
	p.terms++
	if p.terms > MaxTerms {
		return p.fail(t, "select[]: more than %d terms", MaxTerms)
	}
	return nil
}

func (p *parser) primary() (Expr, *Error) {
	t := p.next()
	switch t.kind {
	case tokIdent, tokNumber, tokString:
		if err := p.operand(t); err != nil {
			return nil, err
		}
	}
	switch t.kind {
	case tokIdent:
		if t.text != "defined" || p.peek(0).kind != tokLParen {
			return &Ident{Name: t.text, Col: t.col()}, nil
		}
		p.next()
		name := p.next()
		if name.kind != tokIdent {
			return nil, p.fail(name, "expected attribute name after 'defined('")
		}
		if rp := p.next(); rp.kind != tokRParen {
			return nil, p.fail(rp, "expected ')' after defined(%s", name.text)
		}
		return &Defined{Name: name.text, Col: t.col()}, nil
	case tokNumber:
		return &Number{Value: t.num}, nil
	case tokString:
		return &StringLit{Value: t.text}, nil
	case tokLParen:
		if err := p.enter(t); err != nil {
			return nil, err
		}
		x, err := p.or()
		p.depth--
		if err != nil {
			return nil, err
		}
		if rp := p.next(); rp.kind != tokRParen {
			return nil, p.fail(rp, "expected ')'")
		}
		return x, nil
	}
	return nil, p.fail(t, "expected expression, found %s", p.describe(t))
}
