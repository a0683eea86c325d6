package check_test

import (
	"testing"

	"github.com/locklab/locklab/scenario"
)

func ev(w int32, k scenario.Kind, res string) scenario.Event {
	return scenario.Event{Worker: w, Kind: k, Res: res}
}

func TestCheckerOverlapAndLostUpdate(t *testing.T) {
	evs := []scenario.Event{
		ev(scenario.System, scenario.KindInit, "stock").WithStock(1),
		ev(0, scenario.KindWorkStart, "stock"),
		ev(0, scenario.KindRead, "stock").WithStock(1),
		ev(1, scenario.KindWorkStart, "stock"), // overlap
		ev(1, scenario.KindRead, "stock").WithStock(1),
		ev(0, scenario.KindWrite, "stock").WithStock(0).WithOK(true),
		ev(1, scenario.KindWrite, "stock").WithStock(0).WithOK(true), // lost update + oversold
		ev(0, scenario.KindWorkEnd, "stock"),
		ev(1, scenario.KindWorkEnd, "stock"),
	}
	c, vs := scenario.Check(scenario.Slice(evs))
	if c.Overlaps != 1 || c.LostUpdates != 1 || c.Oversold != 1 || len(vs) != 3 {
		t.Fatalf("overlaps %d, lost %d, oversold %d, violations %+v", c.Overlaps, c.LostUpdates, c.Oversold, vs)
	}
}

func TestCheckerSerialIsClean(t *testing.T) {
	var evs []scenario.Event
	evs = append(evs, ev(scenario.System, scenario.KindInit, "stock").WithStock(2))
	for w := int32(0); w < 3; w++ {
		evs = append(evs, ev(w, scenario.KindWorkStart, "stock"), ev(w, scenario.KindRead, "stock").WithStock(int64(2-w)))
		if w < 2 {
			evs = append(evs, ev(w, scenario.KindWrite, "stock").WithStock(int64(1-w)).WithOK(true))
		}
		evs = append(evs, ev(w, scenario.KindWorkEnd, "stock"))
	}
	// A rejected (fenced) write is not a sale and not an update.
	evs = append(evs, ev(5, scenario.KindRead, "stock").WithStock(0), ev(5, scenario.KindWrite, "stock").WithStock(-1).WithOK(false))
	if _, vs := scenario.Check(scenario.Slice(evs)); len(vs) != 0 {
		t.Fatalf("violations in a serial history: %+v", vs)
	}
}

func TestCheckerIgnoresRecordedViolations(t *testing.T) {
	evs := []scenario.Event{{Kind: scenario.KindViolation, Code: scenario.CodeOverlap}}
	if c, vs := scenario.Check(scenario.Slice(evs)); len(vs) != 0 || c.Overlaps != 0 {
		t.Fatal("a recorded violation was counted again")
	}
}
