package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts is the most names a host list may expand to.
const MaxHosts = 1_000_000

// Hostlist expands a Slurm host list, as slurm.conf(5) writes NodeName
// and a partition's Nodes and sacct(1) writes NodeList, into host names in
// the order written: comma-separated items, each a name in which bracketed
// ranges stand for numbers ("n[1-4]" is n1 … n4; "n[01-10,12]" is n01 …
// n10 and n12: a range whose low end has leading zeros keeps that width).
// Several bracket groups in one name give every combination
// ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2). An empty list is nil; an empty
// item, an unbalanced bracket, a range whose low end is above its high
// end, and a list of more than MaxHosts names are errors.
func Hostlist(s string) ([]string, error) {
	if len(s) > MaxValue {
		return nil, fmt.Errorf("host list %s: longer than %d bytes", Quote(s), MaxValue)
	}
	var out []string
	items, err := splitTop(s)
	if err != nil {
		return nil, fmt.Errorf("host list %s: %w", Quote(s), err)
	}
	for _, it := range items {
		if it == "" {
			return nil, fmt.Errorf("host list %s: empty name", Quote(s))
		}
		if out, err = expand(out, "", it); err != nil {
			return nil, fmt.Errorf("host list %s: %w", Quote(s), err)
		}
	}
	return out, nil
}

// splitTop splits s at the commas outside brackets; "" gives no item.
func splitTop(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var items []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			if depth++; depth > 1 {
				return nil, fmt.Errorf("nested '[' at byte %d", i+1)
			}
		case ']':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("']' without '[' at byte %d", i+1)
			}
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("'[' without ']'")
	}
	return append(items, strings.TrimSpace(s[from:])), nil
}

// expand appends to out every name prefix+rest stands for.
func expand(out []string, prefix, rest string) ([]string, error) {
	open := strings.IndexByte(rest, '[')
	if open < 0 {
		if len(out) >= MaxHosts {
			return nil, fmt.Errorf("more than %d names", MaxHosts)
		}
		return append(out, prefix+rest), nil
	}
	end := strings.IndexByte(rest, ']') // after open: splitTop checked the nesting
	head, body, tail := rest[:open], rest[open+1:end], rest[end+1:]
	if body == "" {
		return nil, fmt.Errorf("empty range \"[]\"")
	}
	for _, r := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil || !allDigits(lo) {
			return nil, fmt.Errorf("range %s: %s is not a number", Quote(r), Quote(lo))
		}
		b, err := strconv.ParseUint(hi, 10, 32)
		if err != nil || !allDigits(hi) {
			return nil, fmt.Errorf("range %s: %s is not a number", Quote(r), Quote(hi))
		}
		if a > b {
			return nil, fmt.Errorf("range %s: %d is above %d", Quote(r), a, b)
		}
		if b-a >= MaxHosts {
			return nil, fmt.Errorf("more than %d names", MaxHosts)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		for n := a; n <= b; n++ {
			if out, err = expand(out, prefix+head+fmt.Sprintf("%0*d", width, n), tail); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// CompressHostlist writes names as a Slurm host list, the inverse of
// Hostlist for what sacct prints: consecutive names that differ only in a
// trailing number of the same width are written as one range
// ("n1,n2,n3,g1" is "n[1-3],g1"); the order is kept.
func CompressHostlist(names []string) string {
	var b strings.Builder
	for i := 0; i < len(names); {
		prefix, num, width := splitNum(names[i])
		j := i + 1
		if width > 0 {
			for j < len(names) {
				p, n, w := splitNum(names[j])
				if p != prefix || w != width || n != num+uint64(j-i) {
					break
				}
				j++
			}
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j-i == 1 {
			b.WriteString(names[i])
		} else {
			pad := 0
			if names[i][len(prefix)] == '0' {
				pad = width
			}
			fmt.Fprintf(&b, "%s[%0*d-%0*d]", prefix, pad, num, pad, num+uint64(j-i-1))
		}
		i = j
	}
	return b.String()
}

// splitNum splits a name into the text before its trailing digits and
// their value and count (0 when it ends in no digit, or in more than 9).
func splitNum(name string) (string, uint64, int) {
	k := len(name)
	for k > 0 && name[k-1] >= '0' && name[k-1] <= '9' {
		k--
	}
	digits := name[k:]
	if digits == "" || len(digits) > 9 {
		return name, 0, 0
	}
	n, _ := strconv.ParseUint(digits, 10, 64)
	return name[:k], n, len(digits)
}
