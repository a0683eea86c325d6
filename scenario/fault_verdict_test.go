package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// Stopping the node that holds the stock breaks the run's own data: the
// verdict says so, in words, instead of a bare connection error.
func TestStoppedDataNodeIsNamedInTheVerdict(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = 3
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The clock stands still: the holder reads the stock, then waits for
	// its delay to pass on the clock.
	for deadline := time.Now().Add(30 * time.Second); !hasRead(r.Log); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no worker read the stock")
		}
	}
	what, err := r.Inject(scenario.Fault{Kind: scenario.FaultNodeStop, Node: 0})
	if err != nil {
		t.Fatal(err)
	}
	if what != "node 0 stopped" {
		t.Fatalf("the fault says %q, want it to name the node", what)
	}
	_ = st.Clock().SetSpeed(1)
	_ = r.Wait()
	s := r.Summary()
	if !strings.Contains(s.Detail, "A fault took the run's data away (node 0 stopped)") {
		t.Fatalf("verdict %q, detail %q", s.Verdict, s.Detail)
	}
}

func hasRead(l *scenario.Log) bool {
	for _, e := range l.Events() {
		if e.Kind == scenario.KindRead && e.Worker >= 0 {
			return true
		}
	}
	return false
}
