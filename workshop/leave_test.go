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
