package timeline_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/tui/timeline"
)

// A node whose clock slews shows its offset growing over the slew, and its
// copy of a key lapsing as early as its clock says.
func TestNodeClockSlews(t *testing.T) {
	tl := timeline.New(2)
	ms := time.Millisecond
	for _, e := range []event.Event{
		{Seq: 0, T: 0, Worker: 0, Kind: event.KindVote, Node: 2, Has: event.HasNode | event.HasOK | event.HasTTL, OK: true, TTL: 1000 * ms, Res: "lock:J"},
		{Seq: 1, T: 150 * ms, Worker: event.System, Kind: event.KindBeat, Node: 2, Has: event.HasNode,
			Msg: "node 2's clock slews 1s forward over 1s: it runs twice as fast until then"},
	} {
		tl.Fold(e)
	}
	n := tl.NodesAt(1)[2]
	for _, c := range []struct {
		now, off time.Duration
		slewing  bool
		holder   int32
	}{
		{100 * ms, 0, false, 0},
		{400 * ms, 250 * ms, true, 0},
		{574 * ms, 424 * ms, true, 0},
		{576 * ms, 426 * ms, true, -1}, // 576 + 426 ≥ 1000: lapsed by node 2's clock
		{2 * time.Second, time.Second, false, -1},
	} {
		if got := n.OffsetAt(c.now); got != c.off {
			t.Errorf("at %v: offset %v, want %v", c.now, got, c.off)
		}
		if got := n.Slewing(c.now); got != c.slewing {
			t.Errorf("at %v: slewing %v, want %v", c.now, got, c.slewing)
		}
		if got := n.HolderAt(c.now); got != c.holder {
			t.Errorf("at %v: held by %d, want %d", c.now, got, c.holder)
		}
	}
}
