package runtime

import (
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyJointSound: whenever jointCaps says the terms can never
// fit, no assignment of hosts to terms (each host to one term at most, a
// term taking at most its capacity on each of its hosts) gives every term
// its tasks and its fewest hosts: a brute force over every assignment.
func TestPropertyJointSound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		terms := rapid.IntRange(2, 5).Draw(t, "terms")
		hosts := rapid.IntRange(1, 5).Draw(t, "hosts")
		var j jointCaps
		j.reset(terms, hosts)
		for h := range hosts {
			for ti := range terms {
				// As altNeverFits records it: MemberCapacity counts no
				// member of a host that takes none of the term.
				if c := rapid.IntRange(-2, 4).Draw(t, "cap"); c > 0 {
					j.set(ti, h, c, 1)
				} else {
					j.set(ti, h, 0, 0)
				}
			}
		}
		for ti := range terms {
			j.need[ti] = rapid.IntRange(1, 6).Draw(t, "need")
			j.hostsNeed[ti] = rapid.IntRange(1, 2).Draw(t, "hosts need")
		}
		why := j.neverFits()
		// Every assignment: a[h] = the term host h serves, or -1.
		a := make([]int, hosts)
		for i := range a {
			a[i] = -1
		}
		fits := false
		var try func(h int)
		try = func(h int) {
			if fits {
				return
			}
			if h == hosts {
				for ti := range terms {
					got, n := 0, 0
					for x := range hosts {
						if a[x] == ti {
							got, n = got+j.cap[ti*hosts+x], n+1
						}
					}
					if got < j.need[ti] || n < j.hostsNeed[ti] {
						return
					}
				}
				fits = true
				return
			}
			for ti := -1; ti < terms; ti++ {
				if ti >= 0 && j.cap[ti*hosts+h] == 0 {
					continue
				}
				a[h] = ti
				try(h + 1)
			}
			a[h] = -1
		}
		try(0)
		if why != "" && fits {
			t.Fatalf("said %q, but an assignment fits", why)
		}
	})
}
