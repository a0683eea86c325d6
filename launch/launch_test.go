package launch_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

func config(t *testing.T) scenario.Config {
	t.Helper()
	sc, err := scenario.Lookup("oversell")
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Defaults
	p.Workers = 3
	return scenario.Config{Scenario: sc.Name, Strategy: "safe", Params: p, Seed: 7, Tool: "test"}
}

// TestStartRunsOnTheStoreItOpens: the run goes to completion on the
// embedded store, its log streamed to the writer asked for once the store
// is open.
func TestStartRunsOnTheStoreItOpens(t *testing.T) {
	var log bytes.Buffer
	asked := 0
	run, st, err := launch.Start(context.Background(), launch.Where{}, config(t), func() (io.Writer, error) {
		asked++
		return &log, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	if st.Kind() != store.Embedded || asked != 1 || log.Len() == 0 || run.Summary().Verdict == "" {
		t.Fatalf("kind %v, events asked %d, %d bytes of log, verdict %q", st.Kind(), asked, log.Len(), run.Summary().Verdict)
	}
}

// TestStartSaysWhichStepFailed: a store that cannot open is an OpenError
// and asks for no event log; a run the scenario refuses is not one.
func TestStartSaysWhichStepFailed(t *testing.T) {
	events := func() (io.Writer, error) {
		t.Error("asked for the event log of a run that never started")
		return io.Discard, nil
	}
	_, _, err := launch.Start(context.Background(), launch.Where{URLs: []string{"redis://127.0.0.1:1"}}, config(t), events)
	var oe *launch.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("unreachable server: %v (%T), want an OpenError", err, err)
	}
	cfg := config(t)
	cfg.Strategy = "no-such-lock"
	_, _, err = launch.Start(context.Background(), launch.Where{}, cfg, nil)
	if err == nil || errors.As(err, &oe) {
		t.Fatalf("a refused run: %v, want a scenario's error, not an OpenError", err)
	}
	wantErr := errors.New("disk full")
	_, _, err = launch.Start(context.Background(), launch.Where{}, config(t), func() (io.Writer, error) { return nil, wantErr })
	if !errors.Is(err, wantErr) {
		t.Fatalf("an event log that cannot be made: %v", err)
	}
}

func TestPool(t *testing.T) {
	for w, want := range map[int]int{1: 10, 50: 50, 10_000: launch.MaxPool} {
		if got := launch.Pool(w); got != want {
			t.Errorf("Pool(%d) = %d, want %d", w, got, want)
		}
	}
}
