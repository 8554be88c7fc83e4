package submit

import (
	"fmt"
	"strings"
	"testing"
)

// orderReq returns an -R value of about size bytes: one order[] of
// distinct keys prefix0, prefix1, ...
func orderReq(prefix string, size int) string {
	var b strings.Builder
	b.WriteString("order[")
	for i := 0; b.Len() < size-12; i++ {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%s%d", prefix, i)
	}
	b.WriteString("]")
	return b.String()
}

// BenchmarkPackTypical: a pack file of MaxJobs ordinary lines.
func BenchmarkPackTypical(b *testing.B) {
	line := "-q normal -n 2,4 -R 'select[mem > 1000] rusage[mem=2000]' -J \"job x\" -W 1:30 -o out.%J -- prog a b 'c d'\n"
	data := []byte(strings.Repeat(line, MaxJobs))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParsePack("p", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPackWorstResReq: pack lines of MaxResReqCount -R values whose
// merged order[] holds as many keys as MaxResReq allows: the costliest
// valid lines known (before issue 29, resreq's duplicate-name checks were
// quadratic in a section's length).
func BenchmarkPackWorstResReq(b *testing.B) {
	var words []string
	for r := range MaxResReqCount {
		words = append(words, "-R", orderReq(fmt.Sprintf("k%d_", r), (MaxResReq-8)/MaxResReqCount))
	}
	data := []byte(strings.Repeat(Join(words)+" x\n", 1000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParsePack("p", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScript: a 1 MiB script of #BSUB lines.
func BenchmarkScript(b *testing.B) {
	var s strings.Builder
	for s.Len() < MaxRequest-100 {
		s.WriteString("#BSUB -q abcdefgh -r -n 1,2 -W 1:00 -J 'a b'\n")
	}
	s.WriteString("run\n")
	text := s.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(nil, Input{Stdin: strings.NewReader(text)}); err != nil {
			b.Fatal(err)
		}
	}
}
