package cluster

import (
	"bytes"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/xce-sched/xce/jobarray"
)

// This file checks the number of jobs a scenario declares before any is
// made (issue 29): an array of a million elements is one short line, and
// eleven of them made 11 million jobs (47 s, 5.4 GB) before the count of
// jobs so far passed MaxScenarioJobs.

// declaredSize returns how many jobs item it, jobs[i], stands for as
// written: 1, or its array's element count (jobarray.Count), without
// making any. ok is false when the item does not say, being malformed
// (not a mapping, an array that is not a well-formed index list of at
// most max_array_size elements): the reading of the jobs reports it
// there, having made only the jobs before it.
func (l *loader) declaredSize(it ast.Node, i int) (n int, ok bool) {
	fs, err := l.item(it, indexPath("jobs", i), jobFields)
	if err != nil {
		return 0, false
	}
	if !l.has(fs, "array") {
		return 1, true
	}
	s, _, err := l.strField(fs, "array", "")
	if err != nil {
		return 0, false
	}
	n, err = jobarray.Count(s, l.c.MaxArraySize)
	return n, err == nil
}

// checkDeclared adds up the sizes the items of the jobs list declare
// (declaredSize), next(i) giving jobs[i] (false after the last), and
// returns the error at the item where the sum passes limit. It stops
// without an error at the end, or at an item that does not say its size
// (the reading of the jobs fails there). The sum stays at most limit +
// jobarray.MaxSize: no overflow. The work it spends on mappings is given
// back: the reading of the jobs spends it again.
func (l *loader) checkDeclared(next func(i int) (ast.Node, bool), limit int) error {
	work := l.work
	defer func() { l.work = work }()
	total := 0
	for i := 0; ; i++ {
		it, ok := next(i)
		if !ok {
			return nil
		}
		n, ok := l.declaredSize(it, i)
		if !ok {
			return nil
		}
		if n > limit-total {
			return l.errAt(it, indexPath("jobs", i), "jobs[0] to jobs[%d] declare %d jobs (an array's elements count one each), more than %d, the most a scenario may hold (checked before any job is made)",
				i, total+n, limit)
		}
		total += n
	}
}

// checkDeclaredItems is checkDeclared over the items of a jobs list read
// whole.
func (l *loader) checkDeclaredItems(items []ast.Node) error {
	return l.checkDeclared(func(i int) (ast.Node, bool) {
		if i < len(items) {
			return items[i], true
		}
		return nil, false
	}, MaxScenarioJobs)
}

// checkDeclaredStream is checkDeclared over a jobs list read one item at
// a time: the items are parsed once for it, and the reading of the jobs
// then starts again from the first (the parser's depth count, the
// anchors and the position are put back). It is skipped when the list
// cannot pass MaxScenarioJobs: each of its items declares one job but
// those that hold an array field, which the text shows as "array", or an
// alias ('*') or escape ('\') that may stand for one, and an array has at
// most max_array_size elements.
func (l *loader) checkDeclaredStream() error {
	s := l.stream
	region := s.items.data[s.r.start:s.r.end]
	marks := bytes.Count(region, []byte("array")) + bytes.Count(region, []byte("*")) + bytes.Count(region, []byte(`\`))
	// At most 2^30 items and marks and 10^6 elements: no overflow.
	if int64(s.r.items)+int64(marks)*int64(l.c.MaxArraySize-1) <= MaxScenarioJobs {
		return nil
	}
	items, depth, anchors := s.items, s.depth.clone(), l.anchors
	// addAnchors inserts into the anchors' lists: let it insert into
	// copies.
	l.anchors = make(map[string][]*ast.AnchorNode, len(anchors))
	for name, as := range anchors {
		l.anchors[name] = slices.Clip(as)
	}
	defer func() { s.items, s.depth, l.anchors = items, depth, anchors }()
	return l.checkDeclared(func(i int) (ast.Node, bool) {
		it, err := l.nextJob(i)
		return it, err == nil && it != nil
	}, MaxScenarioJobs)
}
