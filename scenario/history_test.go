package scenario_test

import (
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

func op(w int32, k event.Kind, call, ret time.Duration) event.Event {
	e := event.Event{Worker: w, Kind: k, Res: "stock", T: ret}
	return e.WithCall(call)
}

// A read logged after a write it did not see: w00's GET was sent at 0µs
// and answered 5 at 10µs; w01's SET 4 ran from 3µs to 5µs, so the log puts
// it first. By the log's order w00 read after w01 wrote; by the intervals
// (and the value it read) it did not, and w01's sale was lost.
func TestLostUpdatesCountedFromIntervalsNotLogOrder(t *testing.T) {
	us := time.Microsecond
	evs := check.Slice{
		{Worker: event.System, Kind: event.KindInit, Res: "stock"},
		op(1, event.KindRead, 1*us, 2*us).WithStock(5),
		op(1, event.KindWrite, 3*us, 5*us).WithStock(4).WithOK(true),
		op(0, event.KindRead, 0, 10*us).WithStock(5),
		op(0, event.KindWrite, 12*us, 13*us).WithStock(4).WithOK(true),
		{Worker: event.System, Kind: event.KindRead, Res: "stock", T: 20 * us},
	}
	evs[0] = evs[0].WithStock(5)
	evs[5] = evs[5].WithStock(4)
	// By the log's order alone, w00's read came after w01's write.
	byLog := slices.Clone(evs[:5])
	if n := check.LostUpdates(byLog); n != 0 {
		t.Fatalf("without the final read the log's order counts %d lost, want 0 (that is the old mistake)", n)
	}
	if n := check.LostUpdates(evs); n != 1 {
		t.Fatalf("%d lost update(s), want 1: w00 read 5 before w01's write landed", n)
	}
	h := event.Header{Scenario: "oversell", Strategy: "none", Params: event.Params{Workers: 2}}
	if s := scenario.Summarize(h, evs); s.LostUpdates != 1 {
		t.Fatalf("summary: %d lost update(s), want 1", s.LostUpdates)
	}
	// Nothing certain enough for a violation at the moment of the write:
	// the intervals overlap, so the log's order is not trusted either way.
	if c, _ := check.Check(evs); c.LostUpdates != 0 {
		t.Fatalf("the checker flagged %d write(s) as surely overtaken", c.LostUpdates)
	}
	// A write that surely landed between a read and its write is flagged.
	sure := check.Slice{
		op(0, event.KindRead, 0, 1*us).WithStock(5),
		op(1, event.KindRead, 0, 2*us).WithStock(5),
		op(1, event.KindWrite, 3*us, 4*us).WithStock(4).WithOK(true),
		op(0, event.KindWrite, 6*us, 7*us).WithStock(4).WithOK(true),
	}
	if c, vs := check.Check(sure); c.LostUpdates != 1 || len(vs) != 1 {
		t.Fatalf("surely overtaken: %d, violations %+v", c.LostUpdates, vs)
	}
}

// The oversell run of the report: 50 workers, stock 5, no lock. Every
// sale after the one that survives is lost, whatever order the log put the
// answers in, and the log holds when each operation was sent.
func TestOversellLostUpdatesAreTheHistorys(t *testing.T) {
	for _, seed := range []uint64{174, 120, 1} {
		p := oversellParams(func(p *event.Params) { p.Workers, p.Stock = 50, 5 })
		r := run(t, nil, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: seed})
		evs := r.Log.Events()
		s := scenario.Summarize(r.Header, check.Slice(evs))
		if want := s.Successes - int(s.InitialStock-s.FinalStock); s.LostUpdates != want {
			t.Errorf("seed %d: %d lost update(s), the history has %d (%d sold, stock %d→%d)", seed, s.LostUpdates, want, s.Successes, s.InitialStock, s.FinalStock)
		}
		for _, e := range evs {
			if (e.Kind == event.KindRead || e.Kind == event.KindWrite) && e.Worker != event.System && e.Has&event.HasCall == 0 {
				t.Fatalf("seed %d: %s without the time it was sent", seed, e.Kind)
			}
		}
		// Any other order the intervals allow — here, by the time each
		// operation was sent — gives the same count.
		other := slices.Clone(evs)
		slices.SortStableFunc(other, func(a, b event.Event) int { return int(a.Start() - b.Start()) })
		if n := scenario.Summarize(r.Header, check.Slice(other)).LostUpdates; n != s.LostUpdates {
			t.Errorf("seed %d: %d lost by sending order, %d by answering order", seed, n, s.LostUpdates)
		}
	}
}
