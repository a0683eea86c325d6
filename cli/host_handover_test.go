package cli

import (
	"fmt"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// TestHostHandoversAcrossMachines: alice and bob join as processes of
// their own, bob's clock four seconds ahead and his clock sync missing the
// server's clock by 30ms (as a loaded network can, beyond what the sync's
// round trips admit). Over several rounds of a correct lock, the safe lock
// changes hands between them faster than that, and the host's log still
// shows no overlap: a lock taken from another machine comes after the
// release it observed. With no lock, the overlaps are real and found.
func TestHostHandoversAcrossMachines(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	const rounds = 3
	skewed := []string{skewEnv + "=4s", missEnv + "=-30ms"}
	joinProc(t, srv.URL, "safe", "alice", 3, rounds, nil)
	joinProc(t, srv.URL, "safe", "bob", 3, rounds, skewed)
	handovers := 0
	for n := range rounds {
		l, out := hostRound(t, srv.URL, "safe", "--lock", "safe", "--retry", "fixed", "--retry-base", "2ms",
			"--max-retries", "1000", "--stock", "6", "--delay", "5ms", "--seed", fmt.Sprint(n+1))
		s := scenario.Summarize(l.Header, l.Log)
		if s.Overlaps != 0 || s.Successes != 6 || s.FinalStock != 0 {
			t.Fatalf("round %d with a safe lock: %d overlap(s), %d sold of 6, final stock %d: %s\n%s", n+1, s.Overlaps, s.Successes, s.FinalStock, s.Verdict, out)
		}
		handovers += crossHandovers(l)
	}
	if handovers == 0 {
		t.Fatalf("the lock never changed hands between alice and bob in %d rounds: nothing was shown", rounds)
	}
	joinProc(t, srv.URL, "none", "alice", 3, 1, nil)
	joinProc(t, srv.URL, "none", "bob", 3, 1, skewed)
	l, out := hostRound(t, srv.URL, "none", "--lock", "none", "--stock", "1", "--delay", "200ms")
	if s := scenario.Summarize(l.Header, l.Log); s.Overlaps == 0 || s.Successes < 2 {
		t.Fatalf("no lock: %d overlap(s), %d sold of 1: the real overlaps went unseen: %s\n%s", s.Overlaps, s.Successes, s.Verdict, out)
	}
}

// crossHandovers counts the times the log shows a lock taken by one
// attendee's worker right after another attendee's worker released it.
func crossHandovers(l *scenario.Loaded) int {
	n, last := 0, ""
	for _, e := range l.Log.Events() {
		if e.Worker < 0 || int(e.Worker) >= len(l.Header.Lanes) {
			continue
		}
		who := check.AttendeeOf(l.Header.Lanes[e.Worker])
		switch e.Kind {
		case event.KindRelease:
			last = who
		case event.KindAcquired:
			if last != "" && last != who {
				n++
			}
			last = ""
		}
	}
	return n
}
