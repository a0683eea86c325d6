package cli

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/event"
)

// --part and --clock complete from, and are refused with, the scenario's
// own lists.
func TestRedlockPartAndClockFlags(t *testing.T) {
	t.Parallel()
	parts := event.PartChoices()
	if got := candidates(t, "run", "redlock", "--part", ""); len(got) != len(parts) || got[0] != "all" || got[len(got)-1] != parts[len(parts)-1].Name {
		t.Errorf("--part completes %v", got)
	}
	if got := candidates(t, "run", "redlock", "--clock", ""); strings.Join(got, ",") != "jump,slew" {
		t.Errorf("--clock completes %v", got)
	}
	code, _, stderr := cli(t, "run", "redlock", "--part", "sixth")
	if code != 2 || !strings.Contains(stderr, "all, quorum, clock, failover, pause, fence") {
		t.Errorf("--part sixth: exit %d, %q", code, stderr)
	}
	code, _, stderr = cli(t, "run", "redlock", "--clock", "drift")
	if code != 2 || !strings.Contains(stderr, "jump, slew") {
		t.Errorf("--clock drift: exit %d, %q", code, stderr)
	}
}
