package schedule_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/locklab/locklab/store"
)

// logOf runs cfg on a fresh embedded store at speed (paced when speed > 0)
// and calls during (if set) while it runs; it returns the run and the
// lines of its log after the header.
func logOf(t *testing.T, cfg scenario.Config, speed float64, during func(*scenario.Run)) (*scenario.Run, []byte) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Nodes: cfg.Params.Nodes, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events, cfg.Paced = &buf, speed > 0
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(r)
	}
	_ = r.Wait()
	_, body, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	return r, body
}

// A fault pressed while a paced run plays — at a moment the host's clock
// chose — goes into the run's schedule with where it landed, and the
// schedule replays the run byte for byte, unpaced.
func TestAPressedFaultReplaysWhereItLanded(t *testing.T) {
	sc, _ := scenario.Lookup("renewal")
	cfg := scenario.Config{Scenario: "renewal", Strategy: "watchdog", Params: sc.Defaults, Seed: 5}
	run, want := logOf(t, cfg, 10, func(r *scenario.Run) {
		time.Sleep(30 * time.Millisecond)
		if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultCrash, Worker: 1}); err != nil {
			t.Fatalf("press: %v", err)
		}
	})
	faults := run.Faults()
	if len(faults) != 1 || faults[0].Pressed == nil {
		t.Fatalf("faults %+v: want the pressed crash, with where it landed", faults)
	}
	var file bytes.Buffer
	replay := cfg
	replay.Faults = faults
	if err := schedule.Of(replay).Write(&file); err != nil {
		t.Fatal(err)
	}
	back, err := schedule.Read(&file)
	if err != nil {
		t.Fatal(err)
	}
	_, got := logOf(t, back.Config(), 0, nil)
	if !bytes.Contains(want, []byte("crashed by an injected fault")) {
		t.Fatalf("the press left no trace in the log")
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the replay differs from the run with the pressed fault:\n%s\nwant\n%s", got, want)
	}
}
