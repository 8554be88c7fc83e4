package tracefile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen: a plain file and its gzip form read the same text; a file
// that starts like gzip but is not fails naming the file.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	const text = "; a comment\n1 0 10 100 4\n"
	plain := filepath.Join(dir, "t.swf")
	zipped := filepath.Join(dir, "t.swf.anything")
	bad := filepath.Join(dir, "bad")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text))
	zw.Close()
	for p, b := range map[string][]byte{plain: []byte(text), zipped: z.Bytes(), bad: {0x1f, 0x8b, 0}} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{plain, zipped} {
		r, c, err := Open(p, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := io.ReadAll(r)
		c.Close()
		if err != nil || string(got) != text {
			t.Errorf("%s: read %q, %v; want %q", p, got, err, text)
		}
	}
	if _, _, err := Open(bad, 0); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("bad gzip: %v, want an error naming %s", err, bad)
	}
	if _, _, err := Open(filepath.Join(dir, "none"), 0); err == nil {
		t.Error("a missing file opened")
	}
}
