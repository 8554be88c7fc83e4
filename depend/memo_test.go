package depend

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// world is a set of jobs for the memo's tests: by ID, and by user and
// name; the lookup of a name leaves out the job being evaluated (own), as
// the scheduler's does.
type world struct {
	byID   map[int64]Job
	named  map[string][]int64 // "user/name" → IDs
	nameOf map[int64]string
	looks  int
}

func (w *world) lookup(user string, own int64) Lookup {
	return func(r Ref) []Job {
		w.looks++
		if r.Name == "" {
			if j, ok := w.byID[r.ID]; ok {
				return []Job{j}
			}
			return nil
		}
		var out []Job
		for _, id := range w.named[user+"/"+r.Name] {
			if id != own {
				out = append(out, w.byID[id])
			}
		}
		return out
	}
}

// TestPropertyMemoAgrees: on random jobs and expressions of random users
// and names, EvalMemo and UnmetMemo with one memo over the whole pass
// answer exactly as Eval and Unmet (2,000 cases: each takes microseconds).
func TestPropertyMemoAgrees(t *testing.T) {
	for range 20 {
		checkMemoAgrees(t)
	}
}

func checkMemoAgrees(t *testing.T) {
	states := []Job{{State: Pending}, {State: Running, Started: true}, {State: Done, Started: true},
		{State: Exit, ExitCode: 1, Started: true}, {State: Exit, ExitCode: 2, Started: true}, {State: Exit}}
	rapid.Check(t, func(t *rapid.T) {
		w := &world{byID: map[int64]Job{}, named: map[string][]int64{}, nameOf: map[int64]string{}}
		n := rapid.IntRange(1, 5).Draw(t, "jobs")
		users := map[int64]string{}
		for id := int64(1); id <= int64(n); id++ {
			w.byID[id] = rapid.SampledFrom(states).Draw(t, "state")
			if id == 1 {
				w.byID[id] = Job{State: Pending} // one job to evaluate at least
			}
			users[id] = rapid.SampledFrom([]string{"u", "v"}).Draw(t, "user")
			w.nameOf[id] = rapid.SampledFrom([]string{"", "a", "a", "b"}).Draw(t, "name")
			if w.nameOf[id] != "" {
				k := users[id] + "/" + w.nameOf[id]
				w.named[k] = append(w.named[k], id)
			}
		}
		cond := func() string {
			ref := rapid.SampledFrom([]string{`"a"`, `"a"`, `"a"`, `"b"`, "1", "2", "9"}).Draw(t, "ref")
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0:
				return "done(" + ref + ")"
			case 1:
				return "ended(" + ref + ")"
			case 2:
				return "started(" + ref + ")"
			case 3:
				return "exit(" + ref + ")"
			}
			return fmt.Sprintf("exit(%s, %s%d)", ref, rapid.SampledFrom([]string{"==", "<", ">="}).Draw(t, "op"), rapid.IntRange(0, 2).Draw(t, "code"))
		}
		var m Memo
		var pending []int64
		for id := int64(1); id <= int64(n); id++ {
			if w.byID[id].State == Pending {
				pending = append(pending, id)
			}
		}
		for range rapid.IntRange(1, 10).Draw(t, "expressions") {
			s := cond()
			for range rapid.IntRange(0, 4).Draw(t, "more") {
				s += rapid.SampledFrom([]string{" && ", " || ", " && !"}).Draw(t, "op") + cond()
			}
			e, err := Parse(s)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			// The expression's job: one of the jobs, pending as the
			// scheduler's admitted jobs are.
			own := rapid.SampledFrom(pending).Draw(t, "own")
			look := w.lookup(users[own], own)
			m.SetScope(users[own], w.nameOf[own])
			if got, want := e.EvalMemo(look, &m), e.Eval(look); got != want {
				t.Fatalf("%s for job %d: EvalMemo %d, Eval %d", s, own, got, want)
			}
			if got, want := e.UnmetMemo(look, &m), e.Unmet(look); got != want {
				t.Fatalf("%s for job %d: UnmetMemo %q, Unmet %q", s, own, got, want)
			}
		}
	})
}

// TestMemoLooksUpOnce, the attack of issue 29 in small: 100 jobs of one
// user, each waiting on "m" named 1,000 times over, where 50 pending jobs
// are named m. Without a memo every condition looks the jobs up (100,000
// lookups); with one, the pass looks them up once for the jobs not named
// m and once for those named m (each leaves itself out of its own name).
func TestMemoLooksUpOnce(t *testing.T) {
	w := &world{byID: map[int64]Job{}, named: map[string][]int64{}, nameOf: map[int64]string{}}
	for id := int64(1); id <= 150; id++ {
		w.byID[id] = Job{State: Pending}
		if id <= 50 {
			w.nameOf[id] = "m"
			w.named["u/m"] = append(w.named["u/m"], id)
		}
	}
	e, err := Parse(strings.TrimSuffix(strings.Repeat(`done("m") || `, 1000), " || "))
	if err != nil {
		t.Fatal(err)
	}
	var m Memo
	for own := int64(1); own <= 100; own++ { // 50 named m, 50 not
		m.SetScope("u", w.nameOf[own])
		if got := e.EvalMemo(w.lookup("u", own), &m); got != Waiting {
			t.Fatalf("job %d: %d, want Waiting", own, got)
		}
	}
	if w.looks != 2 {
		t.Errorf("%d lookups with a memo, want 2", w.looks)
	}
	w.looks = 0
	for own := int64(1); own <= 100; own++ {
		e.Eval(w.lookup("u", own))
	}
	if w.looks != 100_000 {
		t.Errorf("%d lookups without, want 100,000", w.looks)
	}
}
