package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// Stopping the node that holds the stock breaks the run's own data: the
// verdict says so, in words, instead of a bare connection error.
func TestStoppedDataNodeIsNamedInTheVerdict(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = 3
	// The holder reads the stock at once, then waits its 5ms delay: the
	// node stops in between, at 2ms.
	stop := scenario.Timed{At: 2 * time.Millisecond, Fault: scenario.Fault{Kind: scenario.FaultNodeStop, Node: 0}}
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1,
		Faults: []scenario.Timed{stop}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Wait()
	var read, down time.Duration = -1, -1
	for _, e := range r.Log.Events() {
		switch {
		case e.Kind == event.KindRead && e.Worker >= 0 && read < 0:
			read = e.T
		case e.Kind == event.KindNodeDown:
			down = e.T
		}
	}
	if read < 0 || down != stop.At || read > down {
		t.Fatalf("read at %v, node down at %v: want the read first and the stop at %v", read, down, stop.At)
	}
	s := r.Summary()
	if !strings.Contains(s.Detail, "A fault took the run's data away (node 0 stopped)") {
		t.Fatalf("verdict %q, detail %q", s.Verdict, s.Detail)
	}
}
