package resreq

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token. Every part of the language shares
// one token set, so the lexer needs no modes.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokErr            // a lexical error; text holds the message
	tokIdent          // [A-Za-z_][A-Za-z0-9_.]*
	tokNumber         // digits with optional fraction and exponent
	tokString         // "..." or '...'; text holds the contents
	tokLBrack         // [
	tokRBrack         // ]
	tokLBrace         // {
	tokRBrace         // }
	tokLParen         // (
	tokRParen         // )
	tokColon          // :
	tokComma          // ,
	tokAssign         // =
	tokEq             // ==
	tokNe             // !=
	tokLt             // <
	tokLe             // <=
	tokGt             // >
	tokGe             // >=
	tokAnd            // &&
	tokOr             // ||
	tokNot            // !
	tokPlus           // +
	tokMinus          // -
	tokStar           // *
	tokSlash          // /
)

// token is one lexical token. pos is its 0-based byte offset.
type token struct {
	kind tokKind
	pos  int
	text string
	num  float64
}

func (t token) col() int { return t.pos + 1 }

// lexer turns the input into tokens on demand. After the first error token
// it returns that token forever, so a lexical error is reported only if the
// parser gets that far.
type lexer struct {
	src     string
	pos     int
	ring    [4]token // lookahead: ring[(head+i)%4] for i < n; the parser peeks 3 ahead at most
	head, n int
	errTok  token // the first error token, once err
	err     bool
	scanned int // tokens scanned, for the complexity tests
}

// peek returns the k-th token ahead (0 = the next one, k <= 2) without
// consuming it.
func (l *lexer) peek(k int) token {
	for l.n <= k {
		l.ring[(l.head+l.n)%len(l.ring)] = l.scan()
		l.n++
	}
	return l.ring[(l.head+k)%len(l.ring)]
}

// next consumes and returns the next token.
func (l *lexer) next() token {
	t := l.peek(0)
	if t.kind != tokEOF && t.kind != tokErr {
		l.head = (l.head + 1) % len(l.ring)
		l.n--
	}
	return t
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '.' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// op2 returns the two-character operator a b, or 0.
func op2(a, b byte) tokKind {
	switch {
	case b == '=' && a == '=':
		return tokEq
	case b == '=' && a == '!':
		return tokNe
	case b == '=' && a == '<':
		return tokLe
	case b == '=' && a == '>':
		return tokGe
	case a == '&' && b == '&':
		return tokAnd
	case a == '|' && b == '|':
		return tokOr
	}
	return 0
}

// op1 returns the one-character token c, or 0.
func op1(c byte) tokKind {
	switch c {
	case '[':
		return tokLBrack
	case ']':
		return tokRBrack
	case '{':
		return tokLBrace
	case '}':
		return tokRBrace
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	case ':':
		return tokColon
	case ',':
		return tokComma
	case '=':
		return tokAssign
	case '<':
		return tokLt
	case '>':
		return tokGt
	case '!':
		return tokNot
	case '+':
		return tokPlus
	case '-':
		return tokMinus
	case '*':
		return tokStar
	case '/':
		return tokSlash
	}
	return 0
}

func (l *lexer) scan() token {
	if l.err {
		return l.errTok
	}
	l.scanned++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case ' ', '\t', '\n', '\r':
			l.pos++
			continue
		}
		break
	}
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := l.src[start]
	switch {
	case isIdentStart(c):
		for l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokIdent, pos: start, text: l.src[start:l.pos]}
	case isDigit(c) || (c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1])):
		return l.scanNumber()
	case c == '"' || c == '\'':
		for l.pos = start + 1; l.pos < len(l.src); l.pos++ {
			if l.src[l.pos] == c {
				l.pos++
				return token{kind: tokString, pos: start, text: l.src[start+1 : l.pos-1]}
			}
		}
		return l.fail(start, "unterminated string")
	}
	if start+1 < len(l.src) {
		if k := op2(c, l.src[start+1]); k != 0 {
			l.pos += 2
			return token{kind: k, pos: start}
		}
	}
	if k := op1(c); k != 0 {
		l.pos++
		return token{kind: k, pos: start}
	}
	switch c {
	case '&':
		return l.fail(start, "expected '&&'")
	case '|':
		return l.fail(start, "expected '||'")
	}
	_, size := utf8.DecodeRuneInString(l.src[start:])
	return l.fail(start, "unexpected character %q", l.src[start:start+size])
}

// scanNumber scans digits [. digits] [e [+-] digits], or . digits [...].
func (l *lexer) scanNumber() token {
	start := l.pos
	digits := func() int {
		n := 0
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
			n++
		}
		return n
	}
	digits()
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if digits() == 0 {
			return l.fail(start, "malformed number")
		}
	}
	if l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
		return l.fail(start, "malformed number")
	}
	text := l.src[start:l.pos]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil && (math.IsInf(v, 0) || math.IsNaN(v)) {
		return l.fail(start, "number out of range")
	}
	if err != nil && v != 0 { // not a range underflow: cannot happen after the scan above
		return l.fail(start, "malformed number")
	}
	return token{kind: tokNumber, pos: start, text: text, num: v}
}

func (l *lexer) fail(pos int, format string, args ...any) token {
	l.err = true
	l.errTok = token{kind: tokErr, pos: pos, text: errorf(pos+1, format, args...).Msg}
	return l.errTok
}
