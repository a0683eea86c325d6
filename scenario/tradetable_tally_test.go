package scenario_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// The trade-offs table's overlaps are the tally's, at every playhead: a
// column's are its two workers' entries into an occupied section, as the
// checker finds them — a violation event the log carries but the checker
// does not derive (a forged one) counts nowhere.
func TestTradeTableOverlapsAreTheTallys(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The outcome tests' shorter TTL and pause (1s, 2s): the fold, not the
	// pace, is under test.
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "trade-offs", Strategy: "pause", Seed: 1, Params: tradeParams()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := r.Log.Events()
	forged := event.Event{Worker: 0, Kind: event.KindViolation, Code: check.CodeOverlap, Res: "data@redis", Msg: "forged"}
	evs = append(evs[:len(evs):len(evs)], forged)
	table, total := scenario.NewTradeTable(r.Header), 0
	for k := range evs {
		table.Add(&evs[k])
		if k%16 != 0 && k != len(evs)-1 {
			continue
		}
		tl := check.TallyOf(check.Slice(evs[:k+1]))
		sum := 0
		for i, row := range table.Rows() {
			want := tl.Worker(2*i, check.WOverlaps) + tl.Worker(2*i+1, check.WOverlaps)
			if row.Overlaps != want {
				t.Errorf("event %d: %s shows %d overlap(s), the tally %d", k, row.Store, row.Overlaps, want)
			}
			sum += row.Overlaps
		}
		if sum != tl.Get(check.NOverlaps) {
			t.Errorf("event %d: the columns' overlaps add up to %d, the tally's to %d", k, sum, tl.Get(check.NOverlaps))
		}
		total = sum
	}
	if total == 0 {
		t.Fatal("the pause let no one in: the table was never tested on an overlap")
	}
}
