package check_test

import (
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

func ev(w int32, k event.Kind, res string) event.Event {
	return event.Event{Worker: w, Kind: k, Res: res}
}

func TestCheckerOverlapAndLostUpdate(t *testing.T) {
	evs := []event.Event{
		ev(event.System, event.KindInit, "stock").WithStock(1),
		ev(0, event.KindWorkStart, "stock"),
		ev(0, event.KindRead, "stock").WithStock(1),
		ev(1, event.KindWorkStart, "stock"), // overlap
		ev(1, event.KindRead, "stock").WithStock(1),
		ev(0, event.KindWrite, "stock").WithStock(0).WithOK(true),
		ev(1, event.KindWrite, "stock").WithStock(0).WithOK(true), // lost update + oversold
		ev(0, event.KindWorkEnd, "stock"),
		ev(1, event.KindWorkEnd, "stock"),
	}
	c, vs := check.Check(check.Slice(evs))
	if c.Overlaps != 1 || c.LostUpdates != 1 || c.Oversold != 1 || len(vs) != 3 {
		t.Fatalf("overlaps %d, lost %d, oversold %d, violations %+v", c.Overlaps, c.LostUpdates, c.Oversold, vs)
	}
}

func TestCheckerSerialIsClean(t *testing.T) {
	var evs []event.Event
	evs = append(evs, ev(event.System, event.KindInit, "stock").WithStock(2))
	for w := int32(0); w < 3; w++ {
		evs = append(evs, ev(w, event.KindWorkStart, "stock"), ev(w, event.KindRead, "stock").WithStock(int64(2-w)))
		if w < 2 {
			evs = append(evs, ev(w, event.KindWrite, "stock").WithStock(int64(1-w)).WithOK(true))
		}
		evs = append(evs, ev(w, event.KindWorkEnd, "stock"))
	}
	// A rejected (fenced) write is not a sale and not an update.
	evs = append(evs, ev(5, event.KindRead, "stock").WithStock(0), ev(5, event.KindWrite, "stock").WithStock(-1).WithOK(false))
	if _, vs := check.Check(check.Slice(evs)); len(vs) != 0 {
		t.Fatalf("violations in a serial history: %+v", vs)
	}
}

func TestCheckerIgnoresRecordedViolations(t *testing.T) {
	evs := []event.Event{{Kind: event.KindViolation, Code: check.CodeOverlap}}
	if c, vs := check.Check(check.Slice(evs)); len(vs) != 0 || c.Overlaps != 0 {
		t.Fatal("a recorded violation was counted again")
	}
}
