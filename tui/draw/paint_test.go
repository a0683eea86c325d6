package draw

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// TestLooksKeepEachTheme: views drawing at once in different themes (a
// host's screen and its SSH viewers, each pressing t) each find their
// theme's paints built, instead of rebuilding them at every turn.
func TestLooksKeepEachTheme(t *testing.T) {
	dark, mono := themes.Dark(), themes.Mono()
	first := lookOf(dark)
	if lookOf(mono) == first {
		t.Fatal("two themes share one look")
	}
	if lookOf(dark) != first {
		t.Fatal("a theme's look was built anew after another theme drew")
	}
}

// TestLockHolderIsNamedByItsLane: a lock's holder is named as its lane
// is — alice/1 in a room, not the worker number behind it.
func TestLockHolderIsNamedByItsLane(t *testing.T) {
	tl := timeline.New(2)
	tl.Names = []string{"alice/1", "bob/1"}
	tl.Fold(event.Event{Kind: event.KindAttempt, Worker: 1, Res: "lock:stock", TTL: 5 * time.Second})
	tl.Fold(event.Event{Kind: event.KindAcquired, Worker: 1, Res: "lock:stock", TTL: 5 * time.Second, T: time.Millisecond})
	out := ansi.Strip(strings.Join(LockLanes(themes.Mono(), tl, tl.N-1, 2*time.Millisecond, 100, 12, 4), "\n"))
	if !strings.Contains(out, "lock:stock: bob/1") {
		t.Fatalf("the holder is not named bob/1:\n%s", out)
	}
}
