package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xce-sched/xce/internal/api"
	"github.com/xce-sched/xce/internal/live"
	"github.com/xce-sched/xce/sim"
)

// TestWhyText: xce why's text against golden files written by hand
// (testdata/why), times in UTC; now is 1800000000 (Jan 15 08:00:00 2027).
func TestWhyText(t *testing.T) {
	const now = 1800000000
	start := int64(now + 90)
	for _, c := range []struct {
		name string
		rep  api.WhyReply
	}{
		{"pending", api.WhyReply{Now: now,
			Job: api.JobInfo{ID: 12, State: "PEND", Reason: "NotEnoughSlots",
				HostReasons:   []live.HostReason{{Text: "not enough job slots", Hosts: 2}, {Text: "closed by an administrator", Hosts: 1}},
				ForecastStart: api.Forecast{Asked: true, Start: &start}, ForecastHosts: map[string]int{"h2": 4, "h1": 2}},
			Suggestions: []sim.Suggestion{
				{Change: "-n 5", What: "5 tasks instead of 6", Start: now, Now: true},
				{Change: `-R "rusage[mem=4000]"`, What: "mem=4000 per task instead of 5000", Start: now + 30},
			}}},
		{"never", api.WhyReply{Now: now, Partial: true,
			Job: api.JobInfo{ID: 7, State: "PEND", Reason: "BadRequest", Detail: "span[ptile=64]", ForecastStart: api.Forecast{Asked: true}}}},
		{"running", api.WhyReply{Now: now, Job: api.JobInfo{ID: 3, State: "RUN", Hosts: map[string]int{"h2": 2, "h1": 1}}}},
	} {
		var b bytes.Buffer
		if err := writeWhy(&b, c.rep, time.UTC); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "why", c.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", c.name, b.String(), want)
		}
	}
}
