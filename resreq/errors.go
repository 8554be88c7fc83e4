package resreq

import "fmt"

// Error is a syntax error found by Parse or a semantic error found by
// CompileSelect or CompileOrder. Col is the 1-based byte column of the
// offending token in the resreq string (for an unexpected end of input, the
// column just past the end). CompileSelect and CompileOrder set Col to 0 when
// the offending node carries no position (order keys, literals).
type Error struct {
	Col int
	Msg string
}

// Error returns "resreq: col <Col>: <Msg>".
func (e *Error) Error() string {
	return fmt.Sprintf("resreq: col %d: %s", e.Col, e.Msg)
}

func errorf(col int, format string, args ...any) *Error {
	return &Error{Col: col, Msg: fmt.Sprintf(format, args...)}
}
