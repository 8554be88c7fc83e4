package slurm

import (
	"fmt"
	"strings"
)

// Tag returns the xce host tag (a select[] identifier,
// [A-Za-z_][A-Za-z0-9_.]*) that stands for Slurm node feature f: every
// byte that may not appear in an identifier becomes '_', and a name that
// starts with a digit or '.' gets a leading '_' ("CPU-N" is CPU_N, "10GbE"
// is _10GbE). Two features that differ only there map to the same tag;
// the importer reports it.
func Tag(f string) string {
	b := []byte(f)
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c >= '0' && c <= '9' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' || b[0] == '.' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// Constraint turns a Slurm constraint expression, as sbatch(1)
// --constraint writes it, into an xce select[] expression over host tags
// (Tag): features joined by '&' (AND, written &&), '|' (OR, ||), '!'
// (NOT, Slurm 23.02), with parentheses. A bracketed group "[a|b]"
// (sbatch: "Matching OR", every node of the job must have the same one of
// the features) becomes a plain parenthesised OR: xce does not require
// the nodes to agree (docs/slurm.md, what is approximated). Counts
// ("a*2") and node-feature plugins' changeable features are not supported
// and are errors, as are empty operands, unbalanced parentheses and
// characters outside feature names. "" gives "".
func Constraint(s string) (string, error) {
	if len(s) > MaxValue {
		return "", fmt.Errorf("constraint %s: longer than %d bytes", Quote(s), MaxValue)
	}
	var b strings.Builder
	depth := 0
	operand := false // the last token ends an operand
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '&' || c == '|' || c == ',':
			if !operand {
				return "", fmt.Errorf("constraint %s: %q at byte %d has no operand before it", Quote(s), c, i+1)
			}
			if c == '|' {
				b.WriteString(" || ")
			} else {
				// ',' is read as AND, as slurm.conf's Feature lists
				// separate features with it.
				b.WriteString(" && ")
			}
			operand = false
		case c == '!':
			if operand {
				return "", fmt.Errorf("constraint %s: '!' at byte %d follows an operand", Quote(s), i+1)
			}
			b.WriteByte('!')
		case c == '(' || c == '[':
			if operand {
				return "", fmt.Errorf("constraint %s: %q at byte %d follows an operand", Quote(s), c, i+1)
			}
			if depth++; depth > 100 {
				return "", fmt.Errorf("constraint %s: nested deeper than 100", Quote(s))
			}
			b.WriteByte('(')
		case c == ')' || c == ']':
			if !operand || depth == 0 {
				return "", fmt.Errorf("constraint %s: %q at byte %d closes nothing", Quote(s), c, i+1)
			}
			depth--
			b.WriteByte(')')
		case c == '*':
			return "", fmt.Errorf("constraint %s: counts (\"feature*N\") are not supported", Quote(s))
		case isFeatureByte(c):
			if operand {
				return "", fmt.Errorf("constraint %s: two features without an operator at byte %d", Quote(s), i+1)
			}
			j := i
			for j < len(s) && isFeatureByte(s[j]) {
				j++
			}
			b.WriteString(Tag(s[i:j]))
			i, operand = j, true
			continue
		default:
			return "", fmt.Errorf("constraint %s: unexpected %q at byte %d", Quote(s), c, i+1)
		}
		if c == ')' || c == ']' {
			operand = true
		}
		i++
	}
	if b.Len() > 0 && !operand {
		return "", fmt.Errorf("constraint %s: ends without an operand", Quote(s))
	}
	if depth != 0 {
		return "", fmt.Errorf("constraint %s: unbalanced parentheses", Quote(s))
	}
	return b.String(), nil
}

// isFeatureByte reports whether c may appear in a node feature name as
// this reader accepts it: letters, digits, '_', '-', '.', ':', '/', '+'
// and '@' (slurm.conf(5) sets no syntax; these cover the names seen in
// practice, "CPU-N", "gpu:a100", "ib.hdr").
func isFeatureByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || c == '+' || c == '@'
}
