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
