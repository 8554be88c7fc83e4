package runtime

import "fmt"

// jointCaps holds, for the check of a compound request's terms together
// on the idle cluster (neverFits), what each term needs and what each
// host can take of it. The hosts of a plan are distinct: a host (a host
// class's member) takes tasks of one term at most. So for any set S of
// terms, the tasks they need cannot exceed what the hosts matching some
// term of S take, each at most the largest of its capacities for those
// terms; and the hosts they need at least (one per term; ⌈tasks/largest
// capacity⌉ without span[]; the ptile hosts) cannot exceed how many such
// hosts there are. Either failing, no plan exists: this is Hall's
// condition of a bipartite assignment, checked on every set of terms
// when there are at most jointSubsetTerms of them, else on all the terms
// together (a sound check then, not a complete one).
type jointCaps struct {
	terms, hosts int
	cap          []int // cap[t*hosts+h]: what one member of host h takes of term t (0: none)
	members      []int // per host: its members (1, or a class's)
	need         []int // per term: its tasks
	hostsNeed    []int // per term: the fewest hosts it needs
}

// jointSubsetTerms is the most terms whose every subset is checked.
const jointSubsetTerms = 4

// reset sizes j for terms terms over hosts hosts, every capacity 0.
func (j *jointCaps) reset(terms, hosts int) {
	j.terms, j.hosts = terms, hosts
	j.cap = grown(j.cap, terms*hosts)
	j.members = grown(j.members, hosts)
	j.need = grown(j.need, terms)
	j.hostsNeed = grown(j.hostsNeed, terms)
}

// grown returns s with n elements, all 0, reusing its array.
func grown(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// set records that each of host h's members takes each tasks of term t.
// A host that takes none of t (each 0; MemberCapacity then counts no
// member) leaves the member count that another term recorded: a host's
// members are the same for every term, and a term it cannot serve must
// not take them from the terms it can.
func (j *jointCaps) set(t, h, each, members int) {
	if each <= 0 {
		return
	}
	j.cap[t*j.hosts+h] = each
	j.members[h] = members
}

// neverFits returns why the terms together fit no idle cluster, or "".
func (j *jointCaps) neverFits() string {
	if j.terms > jointSubsetTerms {
		return j.setNeverFits(nil)
	}
	for set := 1<<j.terms - 1; set > 0; set-- {
		if set&(set-1) == 0 {
			continue // one term alone is checked by itself
		}
		in := make([]bool, j.terms)
		for t := range in {
			in[t] = set&(1<<t) != 0
		}
		if why := j.setNeverFits(in); why != "" {
			return why
		}
	}
	return ""
}

// setNeverFits checks the terms t with in[t] (every term when in is nil)
// together.
func (j *jointCaps) setNeverFits(in []bool) string {
	has := func(t int) bool { return in == nil || in[t] }
	need, hostsNeed := 0, 0
	for t := range j.terms {
		if has(t) {
			need, hostsNeed = need+j.need[t], hostsNeed+j.hostsNeed[t]
		}
	}
	take, hosts := 0, 0
	for h := range j.hosts {
		most := 0
		for t := range j.terms {
			if has(t) {
				most = max(most, j.cap[t*j.hosts+h])
			}
		}
		if most > 0 {
			take += most * j.members[h]
			hosts += j.members[h]
		}
	}
	switch {
	case need > take:
		return fmt.Sprintf("the compound terms %s need %s, and the hosts that match them take %d in all, each host taking tasks of one term", j.names(in), plural(need, "task"), take)
	case hostsNeed > hosts:
		return fmt.Sprintf("the compound terms %s need %s, and %d match them", j.names(in), plural(hostsNeed, "distinct host"), hosts)
	}
	return ""
}

// names lists the terms t with in[t] (every term when in is nil),
// numbered from 1: "1 and 2", "1, 2 and 4".
func (j *jointCaps) names(in []bool) string {
	var ns []int
	for t := range j.terms {
		if in == nil || in[t] {
			ns = append(ns, t+1)
		}
	}
	s := ""
	for i, n := range ns {
		switch {
		case i == 0:
		case i == len(ns)-1:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(n)
	}
	return s
}
