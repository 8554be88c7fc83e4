package lublin

import (
	"math"
	"testing"

	"github.com/xce-sched/xce/workload/swf"
)

// fataler is what checkInvariants needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInvariants verifies what every generated workload must satisfy.
func checkInvariants(t fataler, m *Model, jobs []swf.Job) {
	t.Helper()
	maxRun := int64(math.Exp(MaxLogRuntime))
	_, inter := m.params()
	// Interactive sizes stop at round(2^UHi), or for power-of-two jobs at
	// 2^round(UHi), which is larger when UHi's fraction is at least 1/2.
	interMax := max(int64(math.Floor(math.Pow(2, inter.UHi)+0.5)), int64(1)<<int(math.Floor(inter.UHi+0.5)))
	prev := int64(0)
	for i, j := range jobs {
		switch {
		case j.ID != int64(i+1):
			t.Fatalf("job %d: ID %d", i+1, j.ID)
		case j.Submit < prev:
			t.Fatalf("job %d: submit %d before the previous job's %d", j.ID, j.Submit, prev)
		case j.Run < 1 || j.Run > maxRun:
			t.Fatalf("job %d: runtime %d outside 1..%d", j.ID, j.Run, maxRun)
		case j.AllocProcs < 1 || j.AllocProcs > int64(m.Nodes):
			t.Fatalf("job %d: size %d outside 1..%d", j.ID, j.AllocProcs, m.Nodes)
		case j.ReqProcs != j.AllocProcs:
			t.Fatalf("job %d: ReqProcs %d != AllocProcs %d", j.ID, j.ReqProcs, j.AllocProcs)
		case j.ReqTime != -1 || j.Wait != -1 || j.User != -1 || j.Group != -1 || j.Executable != -1 ||
			j.Partition != -1 || j.PrecedingID != -1 || j.ThinkTime != -1 ||
			j.AvgCPU != -1 || j.UsedMem != -1 || j.ReqMem != -1:
			t.Fatalf("job %d: unknown fields must be -1: %+v", j.ID, j)
		case j.Status != 1:
			t.Fatalf("job %d: status %d", j.ID, j.Status)
		case j.Queue != QueueBatch && !(m.Interactive && j.Queue == QueueInteractive):
			t.Fatalf("job %d: queue %d (interactive %v)", j.ID, j.Queue, m.Interactive)
		case j.Queue == QueueInteractive && j.AllocProcs > interMax:
			t.Fatalf("job %d: interactive job of size %d above %d", j.ID, j.AllocProcs, interMax)
		}
		prev = j.Submit
	}
}

// checkMean compares a sample mean over n draws with its expected value,
// within 5 standard errors (sd/√n) plus slack.
func checkMean(t *testing.T, name string, got, want, sd float64, n int, slack float64) {
	t.Helper()
	tol := 5*sd/math.Sqrt(float64(n)) + slack
	if math.Abs(got-want) > tol {
		t.Errorf("%s: %.5g, want %.5g ± %.3g", name, got, want, tol)
	} else {
		t.Logf("%s: %.5g (expected %.5g ± %.3g)", name, got, want, tol)
	}
}

// TestBatchWorkload checks a 20,000-job batch workload on 128 nodes against
// the statistics the model implies (expect_test.go).
func TestBatchWorkload(t *testing.T) {
	const nodes, n = 128, 20000
	m := New(nodes, 42)
	jobs := m.Generate(n)
	checkInvariants(t, m, jobs)
	e := expect(BatchParams(nodes), nodes)

	var serial, parallel, pow2 int
	var sumSize, sumRun float64
	counts := make([]float64, nodes+1)
	var runSerial, runLarge []float64 // runtimes of serial jobs, of jobs of 32 nodes or more
	for _, j := range jobs {
		s := int(j.AllocProcs)
		counts[s]++
		sumSize += float64(s)
		sumRun += float64(j.Run)
		switch {
		case s == 1:
			serial++
			runSerial = append(runSerial, float64(j.Run))
		default:
			parallel++
			if s&(s-1) == 0 {
				pow2++
			}
			if s >= 32 {
				runLarge = append(runLarge, float64(j.Run))
			}
		}
	}
	binomial := func(p float64) float64 { return math.Sqrt(p * (1 - p)) }
	checkMean(t, "serial fraction", float64(serial)/n, e.serial, binomial(e.serial), n, 0)
	if e.serial != BatchSerialProb {
		t.Errorf("implied serial fraction %v, want SerialProb %v", e.serial, BatchSerialProb)
	}
	// Pow2Prob is a share of all jobs, and non-power-of-two draws can still
	// land on a power of two, so among parallel jobs the share is not
	// Pow2Prob but 0.9553 (Pow2Prob / (1 − SerialProb) would be 0.9457).
	checkMean(t, "power-of-two share of parallel jobs", float64(pow2)/float64(parallel),
		e.pow2OfParallel, binomial(e.pow2OfParallel), parallel, 0)
	checkMean(t, "mean size", sumSize/n, e.meanSize, math.Sqrt(e.varSize), n, 0)
	checkSizeHistogram(t, counts, e.sizes, n)

	// Runtimes are reported truncated to whole seconds: 1 s of slack.
	checkMean(t, "mean runtime", sumRun/n, e.meanRun, math.Sqrt(e.varRun), n, 1)
	mean, second := e.runMoments(1, 1)
	got, _ := moments(runSerial)
	checkMean(t, "mean runtime of serial jobs", got, mean, math.Sqrt(second-mean*mean), len(runSerial), 1)
	meanL, secondL := e.runMoments(32, nodes)
	gotL, _ := moments(runLarge)
	checkMean(t, "mean runtime of jobs >= 32 nodes", gotL, meanL, math.Sqrt(secondL-meanL*meanL), len(runLarge), 1)
	if !(meanL > 1.3*mean) {
		t.Errorf("larger jobs should run longer: %v vs %v", meanL, mean)
	}

	// Arrivals. Job i arrives when i gamma draws have bought P_i =
	// Σ e^G / 1800 points; whole days cost exactly 48 points (the weights
	// average 1), so the submit time of job n is 1800·P_n within one day
	// (86,400 s) plus 1 s of truncation, and the mean inter-arrival time
	// Submit_n / n estimates E[e^G | G <= 13] within 86,401/n.
	checkMean(t, "mean inter-arrival time", float64(jobs[n-1].Submit)/n,
		e.meanInter, math.Sqrt(e.varInter), n, 86401.0/n)
}

// checkSizeHistogram runs a chi-square goodness-of-fit test of the size
// counts against the implied distribution, over bins merged until each
// expects at least 50 jobs, at significance 1e-6.
func checkSizeHistogram(t *testing.T, counts, probs []float64, n int) {
	t.Helper()
	var chi2, obs, exp float64
	bins := 0
	for s := 1; s < len(probs); s++ {
		obs += counts[s]
		exp += probs[s] * float64(n)
		if exp >= 50 || s == len(probs)-1 {
			if exp > 0 {
				chi2 += (obs - exp) * (obs - exp) / exp
				bins++
			}
			obs, exp = 0, 0
		}
	}
	// Chi-square with k degrees of freedom is gamma(k/2, 2).
	crit := gammaQuantile(1-1e-6, float64(bins-1)/2, 2)
	if chi2 > crit {
		t.Errorf("size histogram: chi-square %.1f over %d bins, critical value %.1f", chi2, bins, crit)
	} else {
		t.Logf("size histogram: chi-square %.1f over %d bins (critical value %.1f at 1e-6)", chi2, bins, crit)
	}
}

// TestDailyCycle checks the bucket weights against an independent
// integration of the gamma density, and that arrivals follow them.
func TestDailyCycle(t *testing.T) {
	p := BatchParams(128)
	w, err := dayWeights(p)
	if err != nil {
		t.Fatal(err)
	}
	// The C code: bucket (i−1) mod 48 gets the gamma(ANum, BNum) mass of
	// [i−0.5, i+0.5], i = 11..58, normalised to mean 1.
	f := gammaDensity(p.ANum, p.BNum)
	var want [BucketsPerDay]float64
	sum := 0.0
	for i := 11; i <= 58; i++ {
		v := simpson(f, float64(i)-0.5, float64(i)+0.5, 2000)
		want[(i-1)%48] = v
		sum += v
	}
	peak := 0
	for k := range want {
		want[k] *= 48 / sum
		if math.Abs(w[k]-want[k]) > 1e-9 {
			t.Errorf("weight of bucket %d: %v, want %v", k, w[k], want[k])
		}
		if w[k] > w[peak] {
			peak = k
		}
	}
	if peak != 26 { // 13:00–13:30: the mode (ANum−1)·BNum ≈ 27.0 maps to bucket 26
		t.Errorf("busiest bucket %d, want 26", peak)
	}
	// Share of arrivals in the buckets of weight above 1: the weights' mass
	// there / 48 = 0.7124. Arrivals come in bursts, so the share's spread
	// is about 3 times the binomial one: over 200 seeds its standard
	// deviation was 0.010 (n = 20,000); the tolerance is 5 times that.
	// Uniform arrivals would give 0.5.
	jobs := New(128, 7).Generate(20000)
	busy, share := 0, 0.0
	for k := range w {
		if w[k] > 1 {
			share += w[k] / 48
		}
	}
	for _, j := range jobs {
		if w[(j.Submit%86400)/BucketSeconds] > 1 {
			busy++
		}
	}
	if got := float64(busy) / float64(len(jobs)); math.Abs(got-share) > 0.05 {
		t.Errorf("share of arrivals in busy buckets %.4f, want %.4f ± 0.05", got, share)
	}
}

// TestInteractiveMix checks the two-stream mode: each job type has its own
// sizes, runtimes and arrival process.
func TestInteractiveMix(t *testing.T) {
	const nodes, n = 128, 20000
	m := New(nodes, 5)
	m.Interactive = true
	jobs := m.Generate(n)
	checkInvariants(t, m, jobs)
	eb, ei := expect(BatchParams(nodes), nodes), expect(InteractiveParams(nodes), nodes)

	type acc struct {
		n, serial  int
		run        float64
		lastSubmit int64
	}
	var by [2]acc
	for _, j := range jobs {
		a := &by[j.Queue]
		a.n++
		if j.AllocProcs == 1 {
			a.serial++
		}
		a.run += float64(j.Run)
		a.lastSubmit = j.Submit
	}
	for _, c := range []struct {
		name string
		q    int
		e    expected
	}{{"batch", QueueBatch, eb}, {"interactive", QueueInteractive, ei}} {
		a, e, name := by[c.q], c.e, c.name
		checkMean(t, name+" serial fraction", float64(a.serial)/float64(a.n), e.serial,
			math.Sqrt(e.serial*(1-e.serial)), a.n, 0)
		checkMean(t, name+" mean runtime", a.run/float64(a.n), e.meanRun, math.Sqrt(e.varRun), a.n, 1)
		// Each stream's last arrival estimates its own mean inter-arrival
		// time, as in TestBatchWorkload.
		checkMean(t, name+" mean inter-arrival time", float64(a.lastSubmit)/float64(a.n),
			e.meanInter, math.Sqrt(e.varInter), a.n, 86401/float64(a.n))
	}
	// Interactive share: rate_i / (rate_i + rate_b) with rate = 1/mean
	// inter-arrival, 0.850. By the renewal central limit theorem the
	// batch count over the horizon t has variance t·σ²/μ³ ≈ 316² here, so
	// the share's standard deviation is about 0.016; 5 of them is 0.08.
	want := (1 / ei.meanInter) / (1/ei.meanInter + 1/eb.meanInter)
	if got := float64(by[QueueInteractive].n) / n; math.Abs(got-want) > 0.08 {
		t.Errorf("interactive share %.4f, want %.4f ± 0.08", got, want)
	}
}
