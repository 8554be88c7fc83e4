// Package clip cuts text that error messages quote, so that a bad input
// costs a bounded message whatever its size.
package clip

import (
	"strconv"
	"unicode/utf8"
)

// Text returns s cut to n characters, followed by "..." if cut.
func Text(s string, n int) string {
	k := 0
	for i := range s {
		if k == n {
			return s[:i] + "..."
		}
		k++
	}
	return s
}

// Quote returns s quoted as by %q, cut to n characters first (then
// followed by "..." after the closing quote).
func Quote(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return strconv.Quote(s)
	}
	c := Text(s, n)
	return strconv.Quote(c[:len(c)-3]) + "..."
}

// Msg cuts a message to at most n bytes (n > 3, at a character boundary),
// followed by "..." if cut.
func Msg(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
