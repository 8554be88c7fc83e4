package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/goccy/go-yaml/token"
	"github.com/xce-sched/xce/internal/clip"
)

// This file bounds what a scenario may cost before go-yaml's parser runs:
// the size of the file, its characters, the nesting and the length of block
// mappings; and the length of error messages.

// MaxScenarioSize is the largest scenario Load and Parse accept, in bytes:
// 16 MiB, room for about 100,000 jobs written one per line. go-yaml
// tokenizes the whole file first, with up to about 300 bytes of memory per
// token: at this size the costliest file (16 MiB of one-character list
// items) takes about 11 s and 3.3 GB before it is rejected, and a
// realistic one of 140,000 jobs loads in about 5 s. A larger file is a
// *ScenarioError, unless its jobs list, read one job at a time, is what
// makes it larger (MaxLargeScenarioSize, scenario_stream.go).
const MaxScenarioSize = 16 << 20

// tooLarge is the message of a file larger than MaxScenarioSize.
const tooLarge = "the file is larger than 16777216 bytes (16 MiB), the most a scenario may hold"

// maxNesting bounds the nesting of YAML collections. go-yaml's parser
// needs memory quadratic in the depth (about 15 GB for 100000 nested
// lists), while a scenario needs fewer than ten levels.
const maxNesting = 100

// maxMapWork bounds the keys of block mappings: the squares of their key
// counts, added up over the file. go-yaml parses a block mapping of n keys
// in time quadratic in n (about 3·10^-9 s × n², 20 s for 80,000 keys) and
// with a recursion n deep (about 400 bytes of stack a key; some 2.5
// million keys overflow Go's 1 GB stack, a crash no recover() catches).
// The bound allows one block mapping of 31,622 keys, or a hundred of
// 3,162 (a scenario's largest mappings, shares and running_on, have one
// key per user or host), at most about 4 s in all; a larger mapping can be
// written in flow style ({a: 1, b: 2}), which go-yaml parses in linear
// time without recursion.
const maxMapWork = 1_000_000_000

// tooDeep returns the first token nested deeper than maxNesting, or the
// first key by which the block mappings exceed maxMapWork, with the
// message to report; or nil. See depthCheck.
func tooDeep(tokens token.Tokens) (*token.Token, string) {
	d := depthCheck{maxWork: maxMapWork}
	for _, tk := range tokens {
		if bad, msg := d.add(tk); bad != nil {
			return bad, msg
		}
	}
	return nil, ""
}

// depthCheck follows the tokens of a document, in order, for tooDeep: flow
// collections are counted by their brackets; block collections by a stack
// of the columns of the tokens that start a line or follow a "- " entry,
// which over-estimates the depth only for unusual layouts. A ':' outside
// flow collections counts a key of the innermost block collection, and
// the squares of the key counts are added up (work) up to maxWork. The
// tokens may come in pieces (the jobs of a large scenario, one at a time),
// as long as they come in document order with their document positions.
type depthCheck struct {
	block, keys []int // columns of the open block collections, and their keys so far
	flow, line  int
	afterEntry  bool
	work        int
	maxWork     int
	prev        *token.Token // the token before: a key when the next is ':'
}

// clone returns a copy of d that shares nothing with it.
func (d *depthCheck) clone() depthCheck {
	c := *d
	c.block, c.keys = slices.Clone(d.block), slices.Clone(d.keys)
	return c
}

// add takes the next token and returns it (or the key before it) with a
// message when it is nested too deeply or passes the work bound.
func (d *depthCheck) add(tk *token.Token) (*token.Token, string) {
	if tk == nil || tk.Position == nil || tk.Type == token.CommentType {
		return nil, ""
	}
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		d.flow++
	case token.SequenceEndType, token.MappingEndType:
		d.flow = max(d.flow-1, 0)
	}
	if d.flow == 0 && (tk.Position.Line != d.line || d.afterEntry) {
		c := tk.Position.Column
		for len(d.block) > 0 && d.block[len(d.block)-1] > c {
			d.block, d.keys = d.block[:len(d.block)-1], d.keys[:len(d.keys)-1]
		}
		if len(d.block) == 0 || d.block[len(d.block)-1] < c {
			d.block, d.keys = append(d.block, c), append(d.keys, 0)
		}
	}
	d.line = tk.Position.Line
	d.afterEntry = d.flow == 0 && tk.Type == token.SequenceEntryType
	if len(d.block)+d.flow > maxNesting {
		return tk, fmt.Sprintf("YAML nested deeper than %d levels", maxNesting)
	}
	if d.flow == 0 && tk.Type == token.MappingValueType && len(d.keys) > 0 {
		n := d.keys[len(d.keys)-1] + 1
		d.keys[len(d.keys)-1] = n
		if d.work += 2*n - 1; d.work > d.maxWork { // Σ n² so far
			return cmp.Or(d.prev, tk), fmt.Sprintf("YAML block mappings too long: the squares of their key counts add up to more than %d at this key (key %d of its mapping); write long mappings in flow style, {a: 1, b: 2}", d.maxWork, n)
		}
	}
	d.prev = tk
	return nil, ""
}

// checkText reports the position of the first invalid UTF-8 byte or the
// first character YAML 1.2 does not allow in a stream (c-printable): C0
// controls other than tab, line feed and carriage return, DEL, C1 controls
// other than NEL, and U+FFFE, U+FFFF. A scenario of zero bytes thus fails at
// 1:1 without being tokenized.
func (l *loader) checkText(data []byte) error {
	line, col := 1, 1
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\r' {
			i, col = i+1, col+1
			continue
		}
		if c == '\n' {
			i, line, col = i+1, line+1, 1
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return &ScenarioError{File: l.file, Line: line, Col: col, Msg: fmt.Sprintf("invalid UTF-8 byte 0x%02x", c)}
		case r < 0xa0 && r != 0x85, r == 0xfffe, r == 0xffff:
			return &ScenarioError{File: l.file, Line: line, Col: col,
				Msg: fmt.Sprintf("character %U is not allowed in YAML (control characters other than tab and line breaks)", r)}
		}
		i, col = i+size, col+1
	}
	return nil
}

// maxQuoted bounds, in characters, a value an error message repeats; a
// longer one is cut and followed by "...".
const maxQuoted = 40

// maxMsg bounds the length of a ScenarioError's message in bytes, whatever
// it quotes (a resreq or go-yaml message included).
const maxMsg = 400

// clipText returns s cut to maxQuoted characters, followed by "..." if cut.
func clipText(s string) string { return clip.Text(s, maxQuoted) }

// quoteValue returns s quoted as by %q, cut to maxQuoted characters first
// (then followed by "..." after the closing quote).
func quoteValue(s string) string { return clip.Quote(s, maxQuoted) }

// clipMsg cuts a message to at most maxMsg bytes (at a character
// boundary), followed by "..." if cut.
func clipMsg(s string) string { return clip.Msg(s, maxMsg) }
