package lublin

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xce-sched/xce/workload/swf"
)

// tracePath finds the shared reference traces: $XCE_TRACES, else the
// shared folder next to the checkout.
func tracePath(name string) string {
	dir := os.Getenv("XCE_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "traces")
	}
	return filepath.Join(dir, name)
}

// readSWF reads the fields the comparison needs (submit, run, size, queue)
// from an SWF file.
func readSWF(t *testing.T, path string) []swf.Job {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("reference trace not available (%v); set XCE_TRACES to its folder", err)
	}
	defer f.Close()
	var jobs []swf.Job
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, ";") {
			continue
		}
		fs := strings.Fields(text)
		if len(fs) != 18 {
			t.Fatalf("%s:%d: %d fields", path, line, len(fs))
		}
		v := make([]int64, 18)
		for i, s := range fs {
			if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				t.Fatalf("%s:%d: field %d: %v", path, line, i+1, err)
			}
		}
		jobs = append(jobs, swf.Job{ID: v[0], Submit: v[1], Run: v[3], AllocProcs: v[4], Queue: v[14]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return jobs
}

// summary is what docs/lublin.md compares.
type summary struct {
	n                                      int
	meanRun, meanSize, serial, meanInter   float64
	pow2OfParallel                         float64
	parallel                               int
	maxSize                                int64
	interactive                            int
	medianRun, fracDay08to18, meanLogInter float64
}

func summarize(jobs []swf.Job) summary {
	s := summary{n: len(jobs)}
	pow2 := 0
	day := 0
	for _, j := range jobs {
		s.meanRun += float64(j.Run)
		s.meanSize += float64(j.AllocProcs)
		s.maxSize = max(s.maxSize, j.AllocProcs)
		if j.AllocProcs == 1 {
			s.serial++
		} else {
			s.parallel++
			if j.AllocProcs&(j.AllocProcs-1) == 0 {
				pow2++
			}
		}
		if j.Queue == QueueInteractive {
			s.interactive++
		}
		if h := j.Submit % 86400 / 3600; h >= 8 && h < 18 {
			day++
		}
	}
	n := float64(len(jobs))
	s.meanRun /= n
	s.meanSize /= n
	s.serial /= n
	s.pow2OfParallel = float64(pow2) / float64(s.parallel)
	s.meanInter = float64(jobs[len(jobs)-1].Submit) / n
	s.fracDay08to18 = float64(day) / n
	return s
}

// TestReferenceTrace compares lublin_256.swf, written by m_lublin99.c for
// 256 nodes, with what the model implies. Every job in it is of type 0 and
// its serial share is 0.249, so it was made with INCLUDE_JOBS_TYPE 0, the
// typeless parameters, with UHI = 8 (and, judging from its size histogram,
// UMED = 5.5): TypelessParams(256). The reference generator's output must
// then match the statistics implied by the parameters as this package reads
// them, which checks that reading against the authors' code.
func TestReferenceTrace(t *testing.T) {
	ref := readSWF(t, tracePath("lublin_256.swf"))
	const nodes = 256
	e := expect(TypelessParams(nodes), nodes)
	s := summarize(ref)
	n := s.n
	if s.interactive != n || s.maxSize > nodes {
		t.Errorf("trace: %d of %d jobs of type 0, largest %d", s.interactive, n, s.maxSize)
	}
	binomial := func(p float64) float64 { return math.Sqrt(p * (1 - p)) }
	checkMean(t, "trace serial fraction", s.serial, e.serial, binomial(e.serial), n, 0)
	checkMean(t, "trace power-of-two share of parallel jobs", s.pow2OfParallel, e.pow2OfParallel,
		binomial(e.pow2OfParallel), s.parallel, 0)
	checkMean(t, "trace mean size", s.meanSize, e.meanSize, math.Sqrt(e.varSize), n, 0)
	checkMean(t, "trace mean runtime", s.meanRun, e.meanRun, math.Sqrt(e.varRun), n, 1)
	// The C code truncates the arrival clock to whole seconds after every
	// job, losing up to 1 s each: 1 s of slack besides the one day.
	checkMean(t, "trace mean inter-arrival time", s.meanInter, e.meanInter, math.Sqrt(e.varInter), n, 1+86401.0/float64(n))

	// This package's output for the same configuration, and for its
	// default (batch jobs), for docs/lublin.md.
	typeless := New(nodes, 1)
	typeless.Batch = TypelessParams(nodes)
	for _, c := range []struct {
		name string
		m    *Model
	}{{"typeless", typeless}, {"batch (default)", New(nodes, 1)}} {
		g := summarize(c.m.Generate(10000))
		t.Logf("%s, seed 1: mean runtime %.0f, mean size %.2f, serial %.4f, pow2|parallel %.4f, mean inter-arrival %.0f",
			c.name, g.meanRun, g.meanSize, g.serial, g.pow2OfParallel, g.meanInter)
	}
	t.Logf("reference trace: mean runtime %.0f, mean size %.2f, serial %.4f, pow2|parallel %.4f, mean inter-arrival %.0f",
		s.meanRun, s.meanSize, s.serial, s.pow2OfParallel, s.meanInter)
	eb := expect(BatchParams(nodes), nodes)
	for _, c := range []struct {
		name string
		e    expected
	}{{"typeless", e}, {"batch", eb}} {
		t.Logf("implied %s: mean runtime %.0f (sd %.0f), mean size %.2f (sd %.2f), serial %.4f, pow2|parallel %.4f, mean inter-arrival %.0f (sd %.0f)",
			c.name, c.e.meanRun, math.Sqrt(c.e.varRun), c.e.meanSize, math.Sqrt(c.e.varSize), c.e.serial,
			c.e.pow2OfParallel, c.e.meanInter, math.Sqrt(c.e.varInter))
	}
}
