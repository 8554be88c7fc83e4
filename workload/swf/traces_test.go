package swf

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// tracePath returns the path of a file of the shared traces folder: from
// $XCE_TRACES if set, else ../../../shared/traces from this package. It
// skips the test if the file is absent.
func tracePath(tb testing.TB, name string) string {
	tb.Helper()
	dir := os.Getenv("XCE_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "traces")
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("trace %s not available (set XCE_TRACES to the traces folder): %v", name, err)
	}
	return path
}

func TestTraces(t *testing.T) {
	kthFirst := Job{ID: 1, Submit: 0, Wait: 964980, Run: 97225, AllocProcs: 56, AvgCPU: -1,
		UsedMem: -1, ReqProcs: 56, ReqTime: 210000, ReqMem: -1, Status: 1, User: 1, Group: 1,
		Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}
	tests := []struct {
		file                      string
		jobs                      int // oracle: grep -v '^;' FILE | grep -c -v '^\s*$' (zcat for .gz)
		maxNodes, maxProcs, start int64
		comments                  int // oracle: grep -c '^;' FILE
		first                     *Job
		lastID                    int64 // oracle: tail -1
		lastLine                  int   // oracle: wc -l
	}{
		{"KTH-SP2-1996-2.1-cln.filtered.swf", 28481, 100, 100, 843480031, 19, &kthFirst, 28490, 28500},
		{"KTH-SP2-1996-2.1-cln.swf", 28489, 100, 100, 843480031, 19, &kthFirst, 28490, 28508},
		{"NASA-iPSC-1993-3.1-cln.swf.gz", 18239, 128, 128, 749458803, 32, nil, 42264, 18271},
		{"lublin_256.swf", 10000, 256, 0, -1, 7, nil, 10000, 10007},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, c, err := Open(tracePath(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			h, err := r.Header()
			if err != nil {
				t.Fatal(err)
			}
			if h.MaxNodes != tt.maxNodes || h.MaxProcs != tt.maxProcs || h.UnixStartTime != tt.start || len(h.Comments) != tt.comments {
				t.Errorf("header %d/%d/%d with %d comments, want %d/%d/%d with %d",
					h.MaxNodes, h.MaxProcs, h.UnixStartTime, len(h.Comments), tt.maxNodes, tt.maxProcs, tt.start, tt.comments)
			}
			n := 0
			var last Job
			for {
				j, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 && tt.first != nil && j != *tt.first {
					t.Errorf("first job %+v, want %+v", j, *tt.first)
				}
				n++
				last = j
			}
			if n != tt.jobs || last.ID != tt.lastID || r.Line() != tt.lastLine {
				t.Errorf("%d jobs, last %d at line %d; want %d jobs, last %d at line %d",
					n, last.ID, r.Line(), tt.jobs, tt.lastID, tt.lastLine)
			}
		})
	}
}

// TestTraceRewrite: the KTH log written by the Writer and read again gives
// the same header and jobs.
func TestTraceRewrite(t *testing.T) {
	r, c, err := Open(tracePath(t, "KTH-SP2-1996-2.1-cln.filtered.swf"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := r.Header()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	_, jobs, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if err := w.Write(j); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r2 := NewReader(&buf, "rewritten")
	h2, err := r2.Header()
	if err != nil || h2.MaxNodes != h.MaxNodes || h2.MaxProcs != h.MaxProcs || h2.UnixStartTime != h.UnixStartTime ||
		len(h2.Comments) != len(h.Comments) {
		t.Fatalf("header %+v, %v; want %+v", h2, err, h)
	}
	for i, want := range jobs {
		if j, err := r2.Next(); err != nil || j != want {
			t.Fatalf("job %d: %+v, %v; want %+v", i, j, err, want)
		}
	}
	if _, err := r2.Next(); err != io.EOF {
		t.Fatalf("after the jobs: %v", err)
	}
}

// BenchmarkReadKTH parses the whole KTH log (28,481 jobs) from memory.
func BenchmarkReadKTH(b *testing.B) {
	data, err := os.ReadFile(tracePath(b, "KTH-SP2-1996-2.1-cln.filtered.swf"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), "KTH")
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 28481 {
			b.Fatalf("%d jobs", n)
		}
	}
}
