package scenario_test

import (
	"encoding/json"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store"
)

func TestSteerExplore(t *testing.T) {
	if os.Getenv("HX") == "" {
		t.Skip()
	}
	sc, _ := scenario.Lookup(os.Getenv("HX_SC"))
	p := sc.Defaults
	p.Workers = 2
	p.Stock = 1
	if j := os.Getenv("HX_P"); j != "" {
		if err := json.Unmarshal([]byte(j), &p); err != nil {
			t.Fatal(err)
		}
	}
	cfg := scenario.Config{Scenario: sc.Name, Strategy: os.Getenv("HX"), Params: p, Seed: 1}
	cfg.Steer = func(step uint64, cands []sim.Candidate) int {
		var b strings.Builder
		for _, c := range cands {
			fmt.Fprintf(&b, " [%s %v %q]", c.Path, c.Ready, c.Doing)
		}
		t.Logf("step %d:%s", step, b.String())
		return -1
	}
	st, err := store.Open(context.Background(), store.Config{Nodes: p.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r.Wait())
	for i := range r.Log.Len() {
		e := r.Log.At(i)
		t.Logf("%v %d %v %s %s", e.T, e.Worker, e.Kind, e.Res, e.Msg)
	}
}
