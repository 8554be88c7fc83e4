package swf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseError is a malformed line of an SWF file: a record with the wrong
// number of fields or a bad value, a header comment whose MaxNodes,
// MaxProcs or UnixStartTime value is not a number, or a line longer than
// MaxLineLength.
type ParseError struct {
	File  string // the name given to NewReader, or the path given to Open
	Line  int    // 1-based line number
	Field int    // 1-based SWF field number; 0 when the whole line is at fault
	Msg   string // what is wrong, e.g. `"abc" is not a number`
}

// Error formats the error as `FILE:LINE: field N (NAME): MSG`, or
// `FILE:LINE: MSG` when Field is 0. Without a file name it starts with
// `line LINE:`.
func (e *ParseError) Error() string {
	var sb strings.Builder
	if e.File != "" {
		sb.WriteString(e.File)
		sb.WriteByte(':')
	} else {
		sb.WriteString("line ")
	}
	sb.WriteString(strconv.Itoa(e.Line))
	sb.WriteString(": ")
	if e.Field > 0 {
		name := "?"
		if e.Field <= len(FieldNames) {
			name = FieldNames[e.Field-1]
		}
		fmt.Fprintf(&sb, "field %d (%s): ", e.Field, name)
	}
	sb.WriteString(e.Msg)
	return sb.String()
}

// NumFields is the number of fields of an SWF record.
const NumFields = 18

// fieldKinds tells, for each field (index 0 for field 1), how it is parsed:
// 'I' an integer, 'T' a time in seconds (an integer; a decimal is rounded to
// the nearest second, as the SWF definition permits floating-point time
// fields), 'F' a decimal (float64).
const fieldKinds = "ITTTIFFITFIIIIIIIT"

// MaxTime is the largest value, in seconds, of a time field (2 submit
// time, 3 wait time, 4 run time, 9 requested time, 18 think time): 10^15 s,
// about 31.7 million years. The Reader rejects a larger value as out of
// range (a ParseError naming the field) and the Writer refuses to write
// one, so that sums of a few times can never overflow int64.
const MaxTime = 1_000_000_000_000_000

// maxQuoted bounds how much of a bad value an error message repeats.
const maxQuoted = 40

// quote renders a field value for an error message, shortened if long.
func quote(b []byte) string {
	if len(b) > maxQuoted {
		return strconv.Quote(string(b[:maxQuoted])) + "..."
	}
	return strconv.Quote(string(b))
}

// Error kinds of a single value; the message is built only on failure.
const (
	valOK = iota
	valNotNumber
	valNotInteger
	valNegative
	valRange
	valTimeRange // a time field above MaxTime
)

func valueMsg(kind int, b []byte) string {
	switch kind {
	case valNotNumber:
		return quote(b) + " is not a number"
	case valNotInteger:
		return quote(b) + " is not an integer"
	case valNegative:
		return quote(b) + " is negative (the only negative value allowed is -1, unknown)"
	case valTimeRange:
		return quote(b) + " is out of range (a time is at most 10^15 s)"
	default:
		return quote(b) + " is out of range"
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseInt parses an integer field. isTime allows a decimal fraction,
// rounded half away from zero; otherwise a fraction must be all zeros.
// Negative values other than exactly -1 are rejected; a time above MaxTime
// (after rounding) is valTimeRange, any other value above MaxInt64 valRange.
func parseInt(b []byte, isTime bool) (int64, int) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var v uint64
	overflow := false
	start := i
	for ; i < len(b) && isDigit(b[i]); i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		} else {
			v = v*10 + d
		}
	}
	digits := i - start
	frac := false    // a nonzero digit after the point
	roundUp := false // first fraction digit >= 5
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for ; i < len(b) && isDigit(b[i]); i++ {
			if b[i] != '0' {
				frac = true
			}
		}
		if i > fs && b[fs] >= '5' {
			roundUp = true
		}
		digits += i - fs
	}
	if digits == 0 || i != len(b) {
		if validFloat(b) {
			return 0, valNotInteger // e.g. 1e3: a number, but not one we take here
		}
		return 0, valNotNumber
	}
	if neg && (frac || (v != 0 && v != 1) || overflow) {
		return 0, valNegative
	}
	if frac && !isTime {
		return 0, valNotInteger
	}
	if roundUp && !neg {
		if v == math.MaxUint64 {
			overflow = true
		}
		v++
	}
	if isTime && (overflow || v > MaxTime) {
		return 0, valTimeRange
	}
	if overflow || v > math.MaxInt64 {
		return 0, valRange
	}
	if neg {
		return -int64(v), valOK
	}
	return int64(v), valOK
}

// validFloat reports whether b is a decimal number: an optional sign,
// digits with an optional point (at least one digit), and an optional
// exponent. It excludes what strconv.ParseFloat also takes (Inf, NaN, hex,
// underscores).
func validFloat(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		i++
	}
	digits := 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && isDigit(b[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			i++
		}
		e := i
		for ; i < len(b) && isDigit(b[i]); i++ {
		}
		if i == e {
			return false
		}
	}
	return i == len(b)
}

// parseFloat parses a decimal field (6, 7, 10). Negative values other than
// -1 are rejected; -0 becomes 0.
func parseFloat(b []byte) (float64, int) {
	// Fast path: a short integer, the common case ("-1", "1234").
	if len(b) > 0 && len(b) <= 15 {
		i := 0
		if b[0] == '-' {
			i = 1
		}
		var v int64
		j := i
		for ; j < len(b) && isDigit(b[j]); j++ {
			v = v*10 + int64(b[j]-'0')
		}
		if j == len(b) && j > i {
			if i == 1 {
				if v != 1 && v != 0 {
					return 0, valNegative
				}
				v = -v
			}
			return float64(v), valOK
		}
	}
	if !validFloat(b) {
		return 0, valNotNumber
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, valRange
	}
	if f < 0 && f != -1 {
		return 0, valNegative
	}
	if f == 0 {
		f = 0 // no -0
	}
	return f, valOK
}

// parseRecord parses one record line in a single pass. The returned error
// has Field and Msg set; the caller fills in File and Line. A wrong field
// count is reported in preference to a bad value.
func parseRecord(line []byte) (Job, *ParseError) {
	var iv [NumFields]int64
	var fv [NumFields]float64
	var bad *ParseError
	n := 0
	i := 0
	for {
		for i < len(line) && line[i] <= ' ' && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		s := i
		// Fast path: [-]digits, at most 18 of them (no overflow), then a
		// separator. Negative numbers other than -0 and -1, and times
		// above MaxTime, take the slow path for its error message.
		neg := line[i] == '-'
		if neg {
			i++
		}
		ds := i
		var v int64
		for i < len(line) && line[i]-'0' < 10 {
			v = v*10 + int64(line[i]-'0')
			i++
		}
		if i-ds > 0 && i-ds <= 18 && (i == len(line) || line[i] <= ' ' && isSpace(line[i])) &&
			(!neg || v <= 1) && (v <= MaxTime || n >= NumFields || fieldKinds[n] != 'T') {
			if neg {
				v = -v
			}
			if n < NumFields {
				if fieldKinds[n] == 'F' {
					fv[n] = float64(v)
				} else {
					iv[n] = v
				}
			}
			n++
			continue
		}
		for i < len(line) && !isSpace(line[i]) {
			i++
		}
		if n < NumFields && bad == nil {
			b := line[s:i]
			var kind int
			switch fieldKinds[n] {
			case 'I':
				iv[n], kind = parseInt(b, false)
			case 'T':
				iv[n], kind = parseInt(b, true)
			default:
				fv[n], kind = parseFloat(b)
			}
			if kind != valOK {
				bad = &ParseError{Field: n + 1, Msg: valueMsg(kind, b)}
			}
		}
		n++
	}
	if n != NumFields {
		return Job{}, &ParseError{Msg: fmt.Sprintf("expected %d fields, got %d", NumFields, n)}
	}
	if bad != nil {
		return Job{}, bad
	}
	return Job{
		ID: iv[0], Submit: iv[1], Wait: iv[2], Run: iv[3], AllocProcs: iv[4],
		AvgCPU: fv[5], UsedMem: fv[6], ReqProcs: iv[7], ReqTime: iv[8],
		ReqMem: fv[9], Status: iv[10], User: iv[11], Group: iv[12],
		Executable: iv[13], Queue: iv[14], Partition: iv[15],
		PrecedingID: iv[16], ThinkTime: iv[17],
	}, nil
}

// Header keys the reader interprets.
const (
	keyMaxNodes      = "MaxNodes"
	keyMaxProcs      = "MaxProcs"
	keyUnixStartTime = "UnixStartTime"
)

// headerKeys returns the interpreted keys in the order the writer emits
// them.
func headerKeys() [3]string {
	return [3]string{keyMaxNodes, keyMaxProcs, keyUnixStartTime}
}

// commentKey splits a comment (without its ';') of the form "Key: value"
// into one of the interpreted keys (case-insensitive, canonical spelling)
// and the value text; ok is false for any other comment.
func commentKey(c string) (key, value string, ok bool) {
	colon := strings.IndexByte(c, ':')
	if colon < 0 {
		return "", "", false
	}
	k := strings.TrimSpace(c[:colon])
	for _, want := range headerKeys() {
		if strings.EqualFold(k, want) {
			return want, strings.TrimSpace(c[colon+1:]), true
		}
	}
	return "", "", false
}

// headerValue parses the value of a MaxNodes, MaxProcs or UnixStartTime
// comment: a leading integer, optionally followed by whitespace and any
// text. -1 means unknown and gives the unset value (0, or -1 for
// UnixStartTime). It returns an error message, or "".
func headerValue(key, value string) (int64, string) {
	end := 0
	for end < len(value) && !isSpace(value[end]) {
		end++
	}
	tok := []byte(value[:end])
	v, kind := parseInt(tok, false)
	if kind != valOK {
		if len(tok) == 0 {
			return 0, key + ": missing value"
		}
		return 0, key + ": " + valueMsg(kind, tok)
	}
	if v == -1 {
		if key == keyUnixStartTime {
			return -1, ""
		}
		return 0, ""
	}
	return v, ""
}

// setHeaderValue stores v under key in h.
func setHeaderValue(h *Header, key string, v int64) {
	switch key {
	case keyMaxNodes:
		h.MaxNodes = v
	case keyMaxProcs:
		h.MaxProcs = v
	case keyUnixStartTime:
		h.UnixStartTime = v
	}
}

// getHeaderValue returns the value of key in h.
func getHeaderValue(h *Header, key string) int64 {
	switch key {
	case keyMaxNodes:
		return h.MaxNodes
	case keyMaxProcs:
		return h.MaxProcs
	default:
		return h.UnixStartTime
	}
}

// headerSet reports whether a header value counts as given for the
// writer: MaxNodes and MaxProcs > 0, and UnixStartTime > 0 too, so that
// the zero Header writes no UnixStartTime line.
func headerSet(v int64) bool {
	return v > 0
}
