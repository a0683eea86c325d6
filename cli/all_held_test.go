package cli

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/scenario"
)

// A verdict the machine may have made is marked, and the table's end says
// what the mark means and how to see past it; runs the machine did not
// hold up are not marked.
func TestRunAllMarksTheRunsTheMachineHeldUp(t *testing.T) {
	sc, err := scenario.Lookup("oversell")
	if err != nil {
		t.Fatal(err)
	}
	jobs := []*allJob{
		{sc: sc, strategy: "safe", sum: &check.Summary{Verdict: "CORRECT"}},
		{sc: sc, strategy: "redsync", sum: &check.Summary{Verdict: "INCOMPLETE — 2 worker(s) stopped by an error", Machine: "The machine could not keep up at 1×: w03's acquire took 273ms"}},
	}
	var out strings.Builder
	if failed := printVerdicts(&out, jobs); failed != 0 {
		t.Fatalf("%d failed", failed)
	}
	lines := strings.Split(out.String(), "\n")
	var safe, redsync string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "oversell ") && strings.Contains(l, " safe "):
			safe = l
		case strings.HasPrefix(l, "oversell ") && strings.Contains(l, " redsync "):
			redsync = l
		}
	}
	if strings.HasSuffix(safe, "*") || !strings.HasSuffix(redsync, "stopped by an error *") {
		t.Errorf("marks: %q, %q", safe, redsync)
	}
	if !strings.Contains(out.String(), "1 run(s) marked * were held up by the machine") || !strings.Contains(out.String(), "locklab run oversell --lock redsync") {
		t.Errorf("no word on the mark:\n%s", out.String())
	}
}
