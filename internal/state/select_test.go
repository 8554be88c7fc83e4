package state

import (
	"slices"
	"testing"

	"github.com/xce-sched/xce/internal/event"
)

// TestSelect: job 1 alone, then array 2 with indices 1, 3 and 5 (jobs 2,
// 3 and 4), then job 5.
func TestSelect(t *testing.T) {
	s := New()
	for i, sub := range []*event.Submit{
		{Job: 1, Queue: "q", TasksMin: 1, TasksMax: 1},
		{Job: 2, Queue: "q", TasksMin: 1, TasksMax: 1, Array: "1-5:2"},
		{Job: 5, Queue: "q", TasksMin: 1, TasksMax: 1},
	} {
		if err := s.Apply(event.Event{Index: uint64(i + 1), Type: event.JobSubmitted, Submit: sub}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		id, index int64
		want      []int64
	}{
		{1, 0, []int64{1}}, {1, 1, nil}, {2, 0, []int64{2, 3, 4}}, {2, 3, []int64{3}}, {2, 2, nil},
		{3, 0, []int64{3}}, {3, 1, nil}, {5, 0, []int64{5}}, {6, 0, nil},
	} {
		var got []int64
		for _, j := range s.Select(tc.id, tc.index) {
			got = append(got, j.Job)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Select(%d, %d) = %v, want %v", tc.id, tc.index, got, tc.want)
		}
	}
}
