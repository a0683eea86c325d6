package workshop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
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
	srv := storetest.Start(t)
	storetest.QuietRedis()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, it does not time a run
	defer cancel()
	p := scenario.Lookup
	sc, _ := p("oversell")
	params := sc.Defaults
	params.Stock = 3
	params.Retry = "full-jitter"
	params.MaxRetries = 50
	h, err := OpenHost(ctx, HostConfig{URL: srv.URL, Room: "t", Scenario: "oversell", Strategy: "safe", Params: params, Seed: 7, Lead: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, _, err := h.Open(ctx); err != ErrEmpty {
		t.Fatalf("Open with nobody in: %v, want ErrEmpty", err)
	}
	errs := make(chan error, 2)
	for _, j := range []JoinConfig{{Name: "alice", Workers: 2}, {Name: "bob", Workers: 3, Skew: 4 * time.Second}} {
		j.URL, j.Room, j.Rounds = srv.URL, "t", 1
		go func() { errs <- Join(ctx, j) }()
	}
	waitLobby(t, h, 2)
	run, r, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(run.Header.Lanes, " "); got != "alice/1 alice/2 bob/1 bob/2 bob/3" {
		t.Fatalf("lanes %q", got)
	}
	evs := run.Log.Events()
	done := map[int32]bool{}
	var last time.Duration
	for _, e := range evs {
		if e.T < last {
			t.Fatalf("event %d at %v before %v", e.Seq, e.T, last)
		}
		last = e.T
		if e.Kind == scenario.KindDone {
			done[e.Worker] = true
		}
	}
	if len(done) != 5 {
		t.Fatalf("outcomes of %d workers, want 5: %v", len(done), done)
	}
	// A lock changes hands between the machines faster than their clocks
	// agree, and the log still shows no overlap: hand-overs go by cause.
	s := run.Summary()
	if s.Successes != 3 || s.FinalStock != 0 || s.Overlaps != 0 {
		t.Fatalf("safe lock with retries over round %d: %d sold of 3, final stock %d, %d overlap(s) (%s)", r.N, s.Successes, s.FinalStock, s.Overlaps, s.Verdict)
	}
}
