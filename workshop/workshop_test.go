package workshop

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/store/storetest"
)

// waitLobby waits until n attendees are in h's lobby.
func waitLobby(t *testing.T, h *Host, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l, err := h.Lobby(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(l) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("fewer than %d attendees joined", n)
}

// TestRoundInProcess: a host and two joiners (one with a skewed clock) in
// one process, on a real redis-server; the host's log has every worker's
// lanes and a verdict over all of them.
func TestRoundInProcess(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	run := playRound(t, srv.URL, "t", "oversell", "safe", func(p *event.Params) {
		p.Stock, p.Retry, p.MaxRetries = 3, "full-jitter", 50
	}, JoinConfig{Name: "alice", Workers: 2}, JoinConfig{Name: "bob", Workers: 3, Skew: 4 * time.Second})
	evs := run.Log.Events()
	var last time.Duration
	for _, e := range evs {
		if e.T < last {
			t.Fatalf("event %d at %v before %v", e.Seq, e.T, last)
		}
		last = e.T
	}
	// A lock changes hands between the machines faster than their clocks
	// agree, and the log still shows no overlap: hand-overs go by cause.
	s := run.Summary()
	if s.Successes != 3 || s.FinalStock != 0 || s.Overlaps != 0 {
		t.Fatalf("safe lock with retries: %d sold of 3, final stock %d, %d overlap(s) (%s)", s.Successes, s.FinalStock, s.Overlaps, s.Verdict)
	}
}
