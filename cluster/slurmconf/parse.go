package slurmconf

import (
	"fmt"
	"io"
	"strings"

	"github.com/xce-sched/xce/slurm"
)

// pair is one Key=Value of a line.
type pair struct {
	key, val string // key as written; val without quotes
}

// line is one logical line of a configuration file: its pairs and the
// number of its first physical line.
type line struct {
	pairs []pair
	n     int
}

// last returns the value of the last pair of l whose key is k (any case),
// and whether there is one.
func (l line) last(k string) (string, bool) {
	v, ok := "", false
	for _, p := range l.pairs {
		if strings.EqualFold(p.key, k) {
			v, ok = p.val, true
		}
	}
	return v, ok
}

// maxLines bounds the logical lines a file may hold.
const maxLines = 10_000_000

// readLines reads the logical lines of a slurm.conf-style file: "#"
// starts a comment (a "\#" is a literal '#'), a line ending in '\'
// continues on the next, and each line is white-space separated
// Key=Value pairs, a value in double quotes holding blanks. An item
// without '=' is an error naming the line.
func readLines(r io.Reader, file string) ([]line, error) {
	lr := slurm.NewLines(r, file)
	var out []line
	var cont strings.Builder
	first := 0
	for {
		b, err := lr.Next()
		if err == io.EOF {
			if cont.Len() > 0 {
				l, err := splitPairs(cont.String(), file, first)
				if err != nil {
					return nil, err
				}
				if len(l.pairs) > 0 {
					out = append(out, l)
				}
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		s := stripComment(string(b))
		if cont.Len() == 0 {
			first = lr.Line()
		}
		if t := strings.TrimRight(s, " \t"); strings.HasSuffix(t, "\\") {
			if cont.Len()+len(t) > slurm.MaxLine {
				return nil, slurm.Errorf(file, first, "continued line longer than %d bytes", slurm.MaxLine)
			}
			cont.WriteString(t[:len(t)-1])
			cont.WriteByte(' ')
			continue
		}
		cont.WriteString(s)
		text := cont.String()
		cont.Reset()
		if strings.TrimSpace(text) == "" {
			continue
		}
		if len(out) >= maxLines {
			return nil, slurm.Errorf(file, first, "more than %d lines", maxLines)
		}
		l, err := splitPairs(text, file, first)
		if err != nil {
			return nil, err
		}
		if len(l.pairs) > 0 {
			out = append(out, l)
		}
	}
}

// stripComment cuts s at its first '#' that is not escaped as "\#" and
// not inside double quotes, and unescapes "\#".
func stripComment(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '#':
			b.WriteByte('#')
			i++
			continue
		case c == '"':
			quoted = !quoted
		case c == '#' && !quoted:
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

// splitPairs splits one logical line into its Key=Value pairs.
func splitPairs(s, file string, n int) (line, error) {
	l := line{n: n}
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := s[start:i]
		if i >= len(s) || s[i] != '=' {
			if strings.EqualFold(key, "include") {
				return l, slurm.Errorf(file, n, "Include is not supported: give the included file's lines in this one")
			}
			return l, slurm.Errorf(file, n, "%s: expected Key=Value", slurm.Quote(key))
		}
		if key == "" {
			return l, slurm.Errorf(file, n, "'=' without a key")
		}
		i++ // '='
		var val string
		if i < len(s) && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return l, slurm.Errorf(file, n, "%s: unterminated '\"'", key)
			}
			val, i = s[i+1:i+1+end], i+end+2
		} else {
			start := i
			for i < len(s) && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			val = s[start:i]
		}
		l.pairs = append(l.pairs, pair{key, val})
	}
	return l, nil
}

// get returns the value of key (case-insensitive) in l and whether it is
// there.
func (l line) get(key string) (string, bool) {
	for _, p := range l.pairs {
		if strings.EqualFold(p.key, key) {
			return p.val, true
		}
	}
	return "", false
}

// Unused is a key, or a parameter of a node or partition line, that xce
// does not use, with where it is written.
type Unused struct {
	File string // the file
	Line int    // the line
	Key  string // as written; "NodeName=n[1-4] Port" for a node's parameter
	Val  string // its value
}

// String returns "file:line: Key=Value".
func (u Unused) String() string { return fmt.Sprintf("%s:%d: %s=%s", u.File, u.Line, u.Key, u.Val) }
