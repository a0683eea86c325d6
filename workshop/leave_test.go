package workshop

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestJoinLeavesOnCancel: an attendee's Ctrl-C (the end of its context)
// in the lobby, or while its workers wait for the round's start, is
// leaving: Join says so and returns nil, never "context canceled".
func TestJoinLeavesOnCancel(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	def, _ := scenario.Lookup("oversell")
	for _, during := range []string{"lobby", "round"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		room := "leave-" + during
		h, err := OpenHost(ctx, HostConfig{URL: srv.URL, Room: room, Scenario: "oversell", Strategy: "safe", Params: def.Defaults,
			Seed: 1, Lead: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		jctx, leave := context.WithCancel(ctx)
		out := &syncBuffer{}
		errs := make(chan error, 1)
		go func() { errs <- Join(jctx, JoinConfig{URL: srv.URL, Room: room, Name: "alice", Workers: 2, Out: out}) }()
		waitLobby(t, h, 1)
		if during == "round" {
			if _, _, err := h.Open(ctx); err != nil {
				t.Fatal(err)
			}
			for !strings.Contains(out.String(), "starting in") {
				time.Sleep(10 * time.Millisecond)
			}
		}
		leave()
		if err := <-errs; err != nil {
			t.Errorf("%s: Ctrl-C returned %v, want nil", during, err)
		}
		if !strings.Contains(out.String(), `alice left the room "`+room+`"`) || strings.Contains(out.String(), "canceled") {
			t.Errorf("%s: Ctrl-C printed:\n%s", during, out)
		}
		h.Close()
		cancel()
	}
}

// TestFireByKeyOrByThemselves: a participant's workers wait for their key
// after the round's start, and go by themselves when it does not come;
// meanwhile everyone else's events still reach the host.
func TestFireByKeyOrByThemselves(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock = 2
	h, err := OpenHost(ctx, HostConfig{URL: srv.URL, Room: "fire", Scenario: "oversell", Strategy: "none", Params: p, Seed: 1, Lead: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	pressed, never := make(chan struct{}, 1), make(chan struct{})
	outs := map[string]*syncBuffer{"alice": {}, "bob": {}, "carol": {}}
	errs := make(chan error, 3)
	go func() {
		errs <- Join(ctx, JoinConfig{URL: srv.URL, Room: "fire", Name: "alice", Workers: 1, Rounds: 1, Out: outs["alice"], Fire: pressed, FireWait: time.Minute})
	}()
	go func() {
		errs <- Join(ctx, JoinConfig{URL: srv.URL, Room: "fire", Name: "bob", Workers: 1, Rounds: 1, Out: outs["bob"], Fire: never, FireWait: 300 * time.Millisecond})
	}()
	go func() {
		errs <- Join(ctx, JoinConfig{URL: srv.URL, Room: "fire", Name: "carol", Workers: 1, Rounds: 1, Out: outs["carol"]})
	}()
	waitLobby(t, h, 3)
	run, _, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(outs["alice"].String(), "fire your 1 worker(s) now") {
		time.Sleep(10 * time.Millisecond)
	}
	pressed <- struct{}{}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(outs["alice"].String(), "alice fired 1 worker(s)") || !strings.Contains(outs["bob"].String(), "bob's 1 worker(s) went by themselves") ||
		strings.Contains(outs["carol"].String(), "fire your") {
		t.Errorf("alice:\n%s\nbob:\n%s\ncarol:\n%s", outs["alice"], outs["bob"], outs["carol"])
	}
	if s := run.Summary(); s.Attempts != 3 {
		t.Errorf("%d attempts, want one per worker: %s", s.Attempts, s.Verdict)
	}
}
