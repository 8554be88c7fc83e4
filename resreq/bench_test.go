package resreq

import (
	"math"
	"testing"
)

// benchExpr is the 5-term select expression the scheduler's hot loop is
// sized for.
const benchExpr = "mem > 1000 && slots >= 2 && type == X86_64 && !ssd && ncpus*2 > 8"

// BenchmarkSelectEval measures Match of a compiled 5-term expression on a
// host that passes every term (so && cannot short-circuit).
func BenchmarkSelectEval(b *testing.B) {
	r, err := Parse(benchExpr)
	if err != nil {
		b.Fatal(err)
	}
	sel, err := CompileSelect(r.Alternatives[0].Terms[0].Select, testSchema())
	if err != nil {
		b.Fatal(err)
	}
	host := testHost(map[string]float64{"mem": 64000, "slots": 8, "type": strX86, "ssd": math.NaN(), "ncpus": 16})
	if !sel.Match(host) {
		b.Fatal("host should match")
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if sel.Match(host) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("no match")
	}
}

// BenchmarkParseAndChain measures Parse and CompileSelect of the longest
// && chain the limits accept: 512 comparisons, MaxTerms operands.
func BenchmarkParseAndChain(b *testing.B) {
	s, _ := items("select[", " && ", "]", MaxTerms/2, -1, named("mem > %d"))
	schema := mapSchema{cols: fakeCols()}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := CompileSelect(r.Alternatives[0].Terms[0].Select, schema); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRusage measures Parse of the longest rusage list the
// limits accept: MaxItems distinct names.
func BenchmarkParseRusage(b *testing.B) {
	s, _ := items("rusage[", ":", "]", MaxItems, -1, named("r%d=1"))
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

// mapSchema is fakeSchema with its columns built once, so that a benchmark
// measures the compiler rather than fakeCols.
type mapSchema struct {
	fakeSchema
	cols map[string]fakeCol
}

func (s mapSchema) Lookup(name string) (int, Kind, bool) {
	c, ok := s.cols[name]
	return c.col, c.kind, ok
}
