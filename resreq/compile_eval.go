package resreq

// The closures below are what Match runs. Common shapes (a column against
// a constant, a column times a constant) get closures of their own so that
// a typical term costs one indirect call and no allocation.

// asNum returns v as a numeric function; a string is an error whose message
// is msg with v's description.
func (c *compiler) asNum(v cval, msg string) (numFn, *Error) {
	switch {
	case v.kind == vStr:
		return nil, errorf(v.pos, msg, v.describe())
	case v.kind == vBool && v.konst:
		k := 0.0
		if v.kb {
			k = 1
		}
		return func([]float64) float64 { return k }, nil
	case v.kind == vBool:
		f := v.cond
		return func(vals []float64) float64 {
			if f(vals) {
				return 1
			}
			return 0
		}, nil
	case v.konst:
		k := v.k
		return func([]float64) float64 { return k }, nil
	case v.col >= 0:
		col := v.col
		return func(vals []float64) float64 { return vals[col] }, nil
	}
	return v.num, nil
}

// truthy is a number's value as a condition: neither NaN nor zero.
func truthy(x float64) bool { return x < 0 || x > 0 }

// asCond returns v as a condition.
func (c *compiler) asCond(v cval) (condFn, *Error) {
	switch {
	case v.kind == vStr:
		return nil, errorf(v.pos, "%s used as a condition", v.describe())
	case v.kind == vBool && v.konst:
		k := v.kb
		return func([]float64) bool { return k }, nil
	case v.kind == vBool:
		return v.cond, nil
	case v.konst:
		k := truthy(v.k)
		return func([]float64) bool { return k }, nil
	case v.col >= 0:
		col := v.col
		return func(vals []float64) bool { return truthy(vals[col]) }, nil
	}
	f := v.num
	return func(vals []float64) bool { return truthy(f(vals)) }, nil
}

// compareOp evaluates a comparison; NaN makes every comparison false.
func compareOp(op Op, a, b float64) bool {
	switch op {
	case OpEq:
		return a == b
	case OpNe:
		return a < b || a > b
	case OpLt:
		return a < b
	case OpLe:
		return a <= b
	case OpGt:
		return a > b
	case OpGe:
		return a >= b
	}
	return false
}

// flip returns op' with (a op b) == (b op' a).
func flip(op Op) Op {
	switch op {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return op
}

// compare compiles x op y. A non-empty strMsg forbids string operands.
func (c *compiler) compare(op Op, x, y cval, strMsg string) (cval, *Error) {
	pos := firstPos(x.pos, y.pos)
	if strMsg != "" {
		for _, v := range [2]cval{x, y} {
			if v.kind == vStr {
				return cval{}, errorf(v.pos, strMsg, v.describe())
			}
		}
	}
	fx, err := c.asNum(x, "%s")
	if err != nil {
		return cval{}, err
	}
	fy, err := c.asNum(y, "%s")
	if err != nil {
		return cval{}, err
	}
	isConst := func(v cval) bool { return v.konst && v.kind == vNum }
	if x.konst && y.konst {
		return constBool(compareOp(op, fx(nil), fy(nil)), pos), nil
	}
	if x.konst && !y.konst {
		x, y, fx, fy, op = y, x, fy, fx, flip(op)
	}
	var f condFn
	switch {
	case isConst(y) && x.kind == vNum && x.col >= 0:
		f = cmpColConst(op, x.col, y.k)
	case isConst(y):
		f = cmpFnConst(op, fx, y.k)
	default:
		f = cmpFnFn(op, fx, fy)
	}
	return cval{kind: vBool, col: -1, pos: pos, cond: f}, nil
}

func cmpColConst(op Op, col int, k float64) condFn {
	switch op {
	case OpEq:
		return func(v []float64) bool { return v[col] == k }
	case OpNe:
		return func(v []float64) bool { x := v[col]; return x < k || x > k }
	case OpLt:
		return func(v []float64) bool { return v[col] < k }
	case OpLe:
		return func(v []float64) bool { return v[col] <= k }
	case OpGt:
		return func(v []float64) bool { return v[col] > k }
	}
	return func(v []float64) bool { return v[col] >= k }
}

func cmpFnConst(op Op, f numFn, k float64) condFn {
	switch op {
	case OpEq:
		return func(v []float64) bool { return f(v) == k }
	case OpNe:
		return func(v []float64) bool { x := f(v); return x < k || x > k }
	case OpLt:
		return func(v []float64) bool { return f(v) < k }
	case OpLe:
		return func(v []float64) bool { return f(v) <= k }
	case OpGt:
		return func(v []float64) bool { return f(v) > k }
	}
	return func(v []float64) bool { return f(v) >= k }
}

func cmpFnFn(op Op, f, g numFn) condFn {
	return func(v []float64) bool { return compareOp(op, f(v), g(v)) }
}

// arithOp evaluates an arithmetic operator per IEEE 754.
func arithOp(op Op, a, b float64) float64 {
	switch op {
	case OpAdd:
		return a + b
	case OpSub:
		return a - b
	case OpMul:
		return a * b
	}
	return a / b
}

// arith compiles x op y for + - * /.
func (c *compiler) arith(op Op, x, y cval) (cval, *Error) {
	pos := firstPos(x.pos, y.pos)
	fx, err := c.asNum(x, "arithmetic on %s")
	if err != nil {
		return cval{}, err
	}
	fy, err := c.asNum(y, "arithmetic on %s")
	if err != nil {
		return cval{}, err
	}
	if x.konst && y.konst {
		return constNum(arithOp(op, fx(nil), fy(nil)), pos), nil
	}
	out := cval{kind: vNum, col: -1, pos: pos}
	if x.kind == vNum && x.col >= 0 && y.kind == vNum && y.konst {
		out.num = arithColConst(op, x.col, y.k)
		return out, nil
	}
	switch op {
	case OpAdd:
		out.num = func(v []float64) float64 { return fx(v) + fy(v) }
	case OpSub:
		out.num = func(v []float64) float64 { return fx(v) - fy(v) }
	case OpMul:
		out.num = func(v []float64) float64 { return fx(v) * fy(v) }
	default:
		out.num = func(v []float64) float64 { return fx(v) / fy(v) }
	}
	return out, nil
}

func arithColConst(op Op, col int, k float64) numFn {
	switch op {
	case OpAdd:
		return func(v []float64) float64 { return v[col] + k }
	case OpSub:
		return func(v []float64) float64 { return v[col] - k }
	case OpMul:
		return func(v []float64) float64 { return v[col] * k }
	}
	return func(v []float64) float64 { return v[col] / k }
}
