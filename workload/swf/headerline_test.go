package swf

import (
	"strings"
	"testing"
)

// TestHeaderLine: the line of the comment whose value Header took: the
// last MaxNodes (line 4, after a blank line), MaxProcs on line 2, none
// for UnixStartTime; and none before the header is read.
func TestHeaderLine(t *testing.T) {
	r := NewReader(strings.NewReader("; MaxNodes: 2\n; MaxProcs: 8\n\n; maxnodes: 4\n1 0 -1 1 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"), "t.swf")
	if n := r.HeaderLine("MaxNodes"); n != 0 {
		t.Fatalf("before Header: %d", n)
	}
	h, err := r.Header()
	if err != nil || h.MaxNodes != 4 || h.MaxProcs != 8 {
		t.Fatalf("%+v %v", h, err)
	}
	for key, want := range map[string]int{"MaxNodes": 4, "MaxProcs": 2, "UnixStartTime": 0} {
		if got := r.HeaderLine(key); got != want {
			t.Errorf("HeaderLine(%s) = %d, want %d", key, got, want)
		}
	}
}
