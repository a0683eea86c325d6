package scenario_test

import (
	"testing"

	"github.com/locklab/locklab/scenario"
)

// TestWallClockLibrariesOpenAtOneX: the view opens a run of a library
// that reads the wall clock at 1×, whatever its scenario's pace, and
// only such libraries are held to it.
func TestWallClockLibrariesOpenAtOneX(t *testing.T) {
	seen := 0
	for _, sc := range scenario.Catalogue() {
		for _, st := range sc.Strategies {
			fixed := scenario.KeepsOneX(st) != ""
			if fixed != (scenario.WallClock(st) != "") {
				t.Errorf("%s: keeps 1× %v, reads the wall clock %q", st, fixed, scenario.WallClock(st))
			}
			if fixed {
				seen++
				if s := sc.OpeningSpeed(st, sc.Defaults); s != 1 {
					t.Errorf("%s --lock %s opens at %g×, want 1×", sc.Name, st, s)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no scenario lists a library that reads the wall clock")
	}
}
