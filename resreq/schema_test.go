package resreq

import "math"

// fakeSchema is a small Schema for tests: a fixed column layout and a fixed
// string table.
type fakeSchema struct{}

type fakeCol struct {
	col  int
	kind Kind
}

// The string table of fakeSchema; an unknown string gets strUnknown.
const (
	strX86     = 0
	strARM     = 1
	strEPYC    = 2
	strHostA   = 3
	strUnknown = -1
)

func (fakeSchema) Lookup(name string) (int, Kind, bool) {
	c, ok := fakeCols()[name]
	return c.col, c.kind, ok
}

func (fakeSchema) StringValue(s string) float64 {
	switch s {
	case "X86_64":
		return strX86
	case "ARM64":
		return strARM
	case "EPYC":
		return strEPYC
	case "hostA":
		return strHostA
	}
	return strUnknown
}

func fakeCols() map[string]fakeCol {
	return map[string]fakeCol{
		"slots":    {0, KindNumeric},
		"maxslots": {1, KindNumeric},
		"mem":      {2, KindNumeric},
		"maxmem":   {3, KindNumeric},
		"ncpus":    {4, KindNumeric},
		"type":     {5, KindString},
		"model":    {6, KindString},
		"hname":    {7, KindString},
		"gpu":      {8, KindBool},
		"ssd":      {9, KindBool},
		"scratch":  {10, KindNumeric},
	}
}

func testSchema() Schema { return fakeSchema{} }

// testHost builds a host vector: every column NaN except those in vals.
func testHost(vals map[string]float64) []float64 {
	cols := fakeCols()
	v := make([]float64, len(cols))
	for i := range v {
		v[i] = math.NaN()
	}
	for name, x := range vals {
		v[cols[name].col] = x
	}
	return v
}
