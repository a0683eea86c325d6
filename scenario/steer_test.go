package scenario_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// stepCfg is the first level's run: two workers, one item, no lock.
func stepCfg(steps ...scenario.Step) scenario.Config {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.Stock, p.Delay = 2, 1, 0
	return scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 1, Steps: steps}
}

func runSteps(t *testing.T, cfg scenario.Config) ([]byte, []scenario.Step, error) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events = &buf
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Wait()
	_, body, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	return body, r.Hand(), err
}

// Hand-chosen steps change the run, and the same steps give the same log.
func TestHandStepsReplayByteForByte(t *testing.T) {
	// w00 reads and writes before w01 starts: no oversell.
	steps := []scenario.Step{{N: 3, Actor: "w00"}, {N: 4, Actor: "w00"}, {N: 5, Actor: "w00"}}
	a, hand, err := runSteps(t, stepCfg(steps...))
	if err != nil {
		t.Fatal(err)
	}
	if len(hand) != len(steps) {
		t.Fatalf("hand %v, want the plan %v", hand, steps)
	}
	b, _, _ := runSteps(t, stepCfg(steps...))
	if !bytes.Equal(a, b) {
		t.Fatal("the same steps gave two logs")
	}
	plain, _, _ := runSteps(t, stepCfg())
	if bytes.Equal(a, plain) {
		t.Fatal("the hand-chosen steps changed nothing")
	}
	if bytes.Contains(a, []byte(`"code":"oversold"`)) {
		t.Fatal("w00 buying alone first should sell once")
	}
	// w00 and w01 both read before either writes: the item sells twice.
	race := []scenario.Step{{N: 3, Actor: "w00"}, {N: 4, Actor: "w00"}, {N: 5, Actor: "w01"}, {N: 6, Actor: "w01"}}
	if c, _, _ := runSteps(t, stepCfg(race...)); !bytes.Contains(c, []byte(`"code":"oversold"`)) {
		t.Fatal("both reading first should oversell")
	}
}

// A step naming an actor that cannot go then ends the run with one line.
func TestBadStepIsRefused(t *testing.T) {
	for _, c := range []struct {
		step scenario.Step
		want string
	}{
		{scenario.Step{N: 8, Actor: "w00"}, "step 8: w00 cannot move (it has finished)"},
		{scenario.Step{N: 4, Actor: "w07"}, "step 4: w07 cannot move (no actor of the run is called w07"},
		{scenario.Step{N: 500, Actor: "w00"}, "step 500: w00 cannot move (the run ended at step"},
	} {
		steps := []scenario.Step{{N: 3, Actor: "w00"}, {N: 4, Actor: "w00"}, {N: 5, Actor: "w00"}, c.step}
		if c.step.N == 4 {
			steps = []scenario.Step{c.step}
		}
		_, _, err := runSteps(t, stepCfg(steps...))
		var se *scenario.StepError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.step, err, c.want)
		}
	}
}
