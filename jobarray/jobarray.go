// Package jobarray parses job array specifications in LSF's syntax (IBM
// Spectrum LSF, "Job arrays": bsub -J "name[index_list]%job_slot_limit"):
// an index list of single indices and ranges with an optional step,
// "1-1000:2,1500,2000-2010", and an optional cap on the elements running
// at once, "%50" (docs/arrays.md).
package jobarray

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxIndex is the largest index an element may have (LSF's, 2^31 - 2).
const MaxIndex = 2_147_483_646

// MaxSize is the most elements any array may have, whatever the
// configuration: the largest max_array_size.
const MaxSize = 1_000_000

// DefaultMaxSize is the most elements an array may have unless the
// configuration says otherwise (LSF's MAX_JOB_ARRAY_SIZE default is 1000;
// Slurm's MaxArraySize 1001).
const DefaultMaxSize = 1000

// Spec is a parsed job array: its name ("" in the scenario form), its
// indices, ascending and distinct, and its cap on elements running at once
// (0: none).
type Spec struct {
	Name    string
	Indices []int64
	Limit   int
	// Text is the index list and cap as written ("1-100:2%10"): what
	// Parse reads back to the same array.
	Text string
}

// Error is a syntax error; Col is the 1-based byte column of the offending
// character in the string given (just past the end for an unexpected end).
type Error struct {
	Col int
	Msg string
}

// Error returns "array: col <Col>: <Msg>".
func (e *Error) Error() string { return fmt.Sprintf("array: col %d: %s", e.Col, e.Msg) }

func errorf(col int, format string, args ...any) *Error {
	return &Error{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads the scenario form of an array, "index_list[%limit]" (for
// instance "1-100:2,200%10"), with at most maxSize elements (maxSize >= 1).
// Its time and memory are bounded by len(s) and maxSize: the element count
// is checked before any index list is expanded. Errors are *Error.
func Parse(s string, maxSize int) (Spec, error) {
	return parse(s, maxSize)
}

// ParseName reads a job name as bsub -J takes it: "name[index_list]%limit"
// is an array named name; a name without '[' is not an array (isArray
// false, and no error). The name part may be empty ("[1-10]"). Errors are
// *Error, their columns in s.
func ParseName(s string, maxSize int) (spec Spec, isArray bool, err error) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		if i := strings.IndexAny(s, "]%"); i >= 0 {
			return Spec{}, false, errorf(i+1, "%q outside an index list [...]", s[i])
		}
		return Spec{Name: s}, false, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Spec{}, true, errorf(len(s)+1, "missing ']' after the index list")
	}
	if end < open {
		return Spec{}, true, errorf(end+1, "']' before '['")
	}
	rest := s[end+1:]
	if rest != "" && rest[0] != '%' {
		return Spec{}, true, errorf(end+2, "expected %%limit or the end after ']', got %q", rest[0])
	}
	if i := strings.IndexAny(s[open+1:end], "[%"); i >= 0 {
		return Spec{}, true, errorf(open+2+i, "unexpected %q in the index list", s[open+1+i])
	}
	spec, err = parseList(s[open+1:end], open+1, maxSize)
	if err == nil && rest != "" {
		spec.Limit, err = limit(rest[1:], end+3)
	}
	if err != nil {
		return Spec{}, true, err
	}
	spec.Name, spec.Text = s[:open], s[open+1:end]+rest
	return spec, true, nil
}

// Count returns how many elements the scenario form of an array s,
// "index_list[%limit]", declares: the sum of its items' counts, without
// making any index (time and memory bounded by len(s)). Its errors are
// Parse's, but for an index listed twice, which only the expanded list
// shows (the count then counts it twice): a spec Parse takes has
// len(Indices) elements, and Count gives that number. A count above
// maxSize is Parse's error.
func Count(s string, maxSize int) (int, error) {
	list, lim, capped := strings.Cut(s, "%")
	_, _, total, err := listItems(list, 0, maxSize)
	if err == nil && capped {
		_, err = limit(lim, len(list)+2)
	}
	if err != nil {
		return 0, err
	}
	return total, nil
}

// parse reads "index_list[%limit]".
func parse(s string, maxSize int) (Spec, error) {
	list, lim, capped := strings.Cut(s, "%")
	spec, err := parseList(list, 0, maxSize)
	if err == nil && capped {
		spec.Limit, err = limit(lim, len(list)+2)
	}
	if err != nil {
		return Spec{}, err
	}
	spec.Text = s
	return spec, nil
}

// limit reads the cap after '%', at column col.
func limit(s string, col int) (int, error) {
	n, err := number(s, col, 1, MaxIndex)
	return int(n), err
}

// parseList reads an index list whose first byte is at column off+1 of
// what the user wrote.
func parseList(list string, off, maxSize int) (Spec, error) {
	var spec Spec
	items, cols, total, err := listItems(list, off, maxSize)
	if err != nil {
		return Spec{}, err
	}
	// Each index with the column of its item, to name the later of two
	// items that list one index twice.
	type at struct {
		index int64
		col   int
	}
	all := make([]at, 0, total)
	for i, it := range items {
		for k := it.lo; k <= it.hi; k += it.step {
			all = append(all, at{k, cols[i]})
		}
	}
	slices.SortFunc(all, func(a, b at) int { return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.col, b.col)) })
	spec.Indices = make([]int64, len(all))
	for i, a := range all {
		if i > 0 && a.index == all[i-1].index {
			return Spec{}, errorf(a.col, "index %d is listed twice", a.index)
		}
		spec.Indices[i] = a.index
	}
	return spec, nil
}

// listItems reads the items of an index list whose first byte is at column
// off+1, with the column of each and the sum of their counts, at most
// maxSize (else an error at the item that passes it). It makes no index.
func listItems(list string, off, maxSize int) (items []rng, cols []int, total int, err error) {
	col := off + 1
	for part := range strings.SplitSeq(list, ",") {
		it, err := rangeItem(part, col)
		if err != nil {
			return nil, nil, 0, err
		}
		// Both at most MaxIndex: no overflow, and total stays at most
		// maxSize + MaxIndex.
		n := int((it.hi-it.lo)/it.step + 1)
		if total += n; total > maxSize {
			return nil, nil, 0, errorf(col, "more than %d elements (the most an array may have)", maxSize)
		}
		items, cols = append(items, it), append(cols, col)
		col += len(part) + 1
	}
	return items, cols, total, nil
}

type rng struct{ lo, hi, step int64 }

// rangeItem reads "n", "n-m" or "n-m:step" starting at column col.
func rangeItem(s string, col int) (rng, error) {
	if s == "" {
		return rng{}, errorf(col, "empty index (expected n, n-m or n-m:step)")
	}
	lo, rest, isRange := strings.Cut(s, "-")
	if i := strings.IndexByte(lo, ':'); !isRange && i >= 0 {
		return rng{}, errorf(col+i, "a step needs a range (n-m:step)")
	}
	r := rng{step: 1}
	var err error
	if r.lo, err = number(lo, col, 1, MaxIndex); err != nil {
		return rng{}, err
	}
	r.hi = r.lo
	if !isRange {
		return r, nil
	}
	hiCol := col + len(lo) + 1
	hi, step, hasStep := strings.Cut(rest, ":")
	if r.hi, err = number(hi, hiCol, 1, MaxIndex); err != nil {
		return rng{}, err
	}
	if r.hi < r.lo {
		return rng{}, errorf(hiCol, "range %d-%d ends before it starts", r.lo, r.hi)
	}
	if hasStep {
		if r.step, err = number(step, hiCol+len(hi)+1, 1, MaxIndex); err != nil {
			return rng{}, err
		}
	}
	return r, nil
}

// number reads a whole number in [lo, hi] at column col.
func number(s string, col int, lo, hi int64) (int64, error) {
	if s == "" {
		return 0, errorf(col, "expected a whole number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errorf(col+i, "expected a digit, got %q", s[i])
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errorf(col, "%s is out of range %d to %d", s, lo, hi)
	}
	return n, nil
}

// Format writes spec's index list and cap in the scenario form, ranges of
// consecutive indices as n-m: Parse(Format(spec)) gives spec back.
func Format(spec Spec) string {
	var b strings.Builder
	for i := 0; i < len(spec.Indices); {
		j := i
		for j+1 < len(spec.Indices) && spec.Indices[j+1] == spec.Indices[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(spec.Indices[i], 10))
		if j > i {
			fmt.Fprintf(&b, "-%d", spec.Indices[j])
		}
		i = j + 1
	}
	if spec.Limit > 0 {
		fmt.Fprintf(&b, "%%%d", spec.Limit)
	}
	return b.String()
}

// Ref names a job as users write it: "12" (job 12, or every element of
// array 12) or "12[3]" (the element of array 12 with index 3; LSF's
// bjobs/bkill form). Index is 0 when none is given.
type Ref struct {
	ID    int64
	Index int64
}

// ParseRef reads "ID" or "ID[INDEX]", both whole numbers of at least 1.
func ParseRef(s string) (Ref, error) {
	bad := fmt.Errorf("bad job ID %q (expected ID or ID[INDEX])", s)
	idPart, rest, hasIndex := strings.Cut(s, "[")
	if idPart == "" || strings.Trim(idPart, "0123456789") != "" {
		return Ref{}, bad
	}
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id < 1 {
		return Ref{}, bad
	}
	r := Ref{ID: id}
	if hasIndex {
		in, ok := strings.CutSuffix(rest, "]")
		if !ok || in == "" || strings.Trim(in, "0123456789") != "" {
			return Ref{}, bad
		}
		if r.Index, err = strconv.ParseInt(in, 10, 64); err != nil || r.Index < 1 {
			return Ref{}, bad
		}
	}
	return r, nil
}

// String writes r as ParseRef reads it.
func (r Ref) String() string {
	if r.Index == 0 {
		return strconv.FormatInt(r.ID, 10)
	}
	return fmt.Sprintf("%d[%d]", r.ID, r.Index)
}
