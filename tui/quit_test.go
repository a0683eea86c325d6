package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/themes"
)

// Quitting mid-run while the real server is frozen: the view ends without
// waiting for the workers' read time-outs, and says which keys it could not
// delete and how to remove them.
func TestQuitOnAFrozenServerSaysWhatWasLeft(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	c := srv.Client(t)
	in, keys := io.Pipe()
	defer keys.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Theme: themes.Mono(), URLs: []string{srv.URL}, Scenario: "deadlock",
			Strategy: "safe", Start: true}, in, io.Discard)
	}()
	// The run is under way once its first lock is on the server.
	for {
		ks, err := c.Keys(context.Background(), "locklab:*:lock:A").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the view ended before its run began: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	srv.Freeze(t)
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var left *store.LeftError
	if !errors.As(err, &left) {
		t.Fatalf("quit on a frozen server: %v, want what was left", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "locklab clean --redis") || strings.Contains(msg, "\n") {
		t.Fatalf("not one line saying how to remove the keys: %q", msg)
	}
}
