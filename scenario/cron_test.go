package scenario_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// TestCron: with the lock released when the job ends, the late server runs
// the period's job again; held for the period, or with a last-run key, it
// runs once; with no lock, every server runs it. The story is chained by
// cues, so no seed and no busy machine changes who does what.
func TestCron(t *testing.T) {
	t.Parallel()
	runs := func(o outcome) []string {
		var who []string
		for _, e := range o.evs {
			if e.Kind == event.KindWrite && e.Res == "report@09:00" && e.OK {
				who = append(who, check.WorkerName(e.Worker))
			}
		}
		return who
	}
	want := map[string][]string{
		"release":  {"w00", "w02"},
		"hold":     {"w00"},
		"last-run": {"w00"},
		"none":     {"w00", "w01", "w02"},
	}
	sc, _ := scenario.Lookup("cron")
	for _, st := range sc.Strategies {
		each(t, "cron", st, 20, nil, func(t *testing.T, o outcome) {
			got := runs(o)
			slices.Sort(got)
			if !slices.Equal(got, want[st]) {
				t.Errorf("%s: the 09:00 report ran by %v, want %v", st, got, want[st])
			}
			dup := len(want[st]) > 1
			if dup != (o.s.Duplicates > 0) || dup != strings.HasPrefix(o.s.Verdict, "DUPLICATE") {
				t.Errorf("%s: %d duplicate(s), verdict %q", st, o.s.Duplicates, o.s.Verdict)
			}
			if st != "none" && o.s.Overlaps != 0 {
				t.Errorf("%s: %d overlap(s) under a lock", st, o.s.Overlaps)
			}
			if ids := beatIDs(o); !slices.Equal(ids, sc.BeatIDs(st, sc.Defaults)) {
				t.Errorf("%s: beats %v, want %v", st, ids, sc.BeatIDs(st, sc.Defaults))
			}
		})
	}
}

func beatIDs(o outcome) []string {
	var ids []string
	for _, e := range o.evs {
		// A real-time run on a busy machine may also say the machine held
		// it up: that is not one of the story's beats.
		if e.Kind == event.KindBeat && e.Code != "" && e.Code != check.BeatMachine {
			ids = append(ids, e.Code)
		}
	}
	return ids
}
