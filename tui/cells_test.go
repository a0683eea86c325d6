package tui

import (
	"testing"

	"github.com/locklab/locklab/tui/draw"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// TestEveryCriticalSectionHasACell: in every scenario's default run (among
// them crash/safe, whose two critical sections after the TTL last 5 ms of
// a 2 s window and end in its last column), every worker that entered a
// critical section shows at least one cell of it on its lane (or of the
// violation or crash inside it), at the moment it finishes and at DONE, at
// 80 and 160 columns.
func TestEveryCriticalSectionHasACell(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every scenario")
	}
	for _, sc := range scenario.Catalogue() {
		t.Run(sc.Name+"/"+sc.Strategies[0], func(t *testing.T) {
			t.Parallel()
			l, err := runDefault(t, sc)
			if err != nil {
				t.Fatal(err)
			}
			v := newRunView(replaySession(sc.Name, l), 1)
			entered := map[int32]bool{}
			last := l.Log.Len() - 1
			for i := range l.Log.Len() {
				e := l.Log.At(i)
				if e.Kind == event.KindWorkStart && e.Worker >= 0 {
					entered[e.Worker] = true
				}
				at := []int32{}
				switch {
				case i == last:
					for w := range entered {
						at = append(at, w)
					}
				case e.Kind == event.KindDone && entered[e.Worker]:
					at = append(at, e.Worker)
				}
				for _, w := range at {
					for _, width := range []int{78, 158} {
						s := draw.NewScale(e.T, width-8)
						cells := draw.LaneCells(nil, make([]uint16, s.Cols()), v.tl, int(w), i, s, e.T)
						if !hasHoldCell(cells) {
							t.Errorf("event %d at %v: %s entered a critical section but its lane at %d columns has no cell of it: %v",
								i, e.T, check.WorkerName(w), width, cells)
						}
					}
				}
			}
		})
	}
}

// hasHoldCell: a cell shows the critical section, or a violation or a
// crash inside it.
func hasHoldCell(cells []themes.State) bool {
	for _, c := range cells {
		if c == themes.Critical || c == themes.Violation || c == themes.Crashed {
			return true
		}
	}
	return false
}
