package check

import (
	"testing"

	"github.com/locklab/locklab/event"
)

func TestLostUpdatesFollowTheChainOfWrites(t *testing.T) {
	rd := func(w int32) event.Event { return event.Event{Kind: event.KindRead, Worker: w, Res: "stock"} }
	wr := func(w int32) event.Event {
		return event.Event{Kind: event.KindWrite, Worker: w, Res: "stock"}.WithOK(true)
	}
	for _, c := range []struct {
		name string
		evs  Slice
		want int
	}{
		{"in turn", Slice{rd(0), wr(0), rd(1), wr(1)}, 0},
		{"both read first", Slice{rd(0), rd(1), wr(0), wr(1)}, 1},
		{"three read first", Slice{rd(0), rd(1), rd(2), wr(0), wr(1), wr(2)}, 2},
		// 10 → 9 (w0) → 8 (w1) → 9 (w2, from 10) → 8 (w3, from 9): four sold,
		// two decrements survive.
		{"an overwrite undone", Slice{rd(0), rd(2), wr(0), rd(1), rd(3), wr(1), wr(2), wr(3)}, 2},
		{"refused write", Slice{rd(0), rd(1), wr(0), event.Event{Kind: event.KindWrite, Worker: 1, Res: "stock"}.WithOK(false)}, 0},
		{"blind writes", Slice{wr(0), wr(1)}, 0},
	} {
		if got := LostUpdates(c.evs); got != c.want {
			t.Errorf("%s: %d lost, want %d", c.name, got, c.want)
		}
	}
}
