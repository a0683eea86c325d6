package scenario_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// TestOutcomeRates measures how often each scenario's outcome happens over
// many seeds on the embedded store: LOCKLAB_RATES=100 go test -run
// OutcomeRates -v -timeout 3h ./scenario. LOCKLAB_RATES_SCENARIOS names
// the scenarios to measure (default all). LOCKLAB_RATES_SPEED sets the
// clock's speed (default 1×) and LOCKLAB_RATES_PAR how many runs go at once
// (default 4). It prints a markdown table (verdict classes and their
// counts) and asserts nothing: it is a figure.
func TestOutcomeRates(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOCKLAB_RATES"))
	if n <= 0 {
		t.Skip("set LOCKLAB_RATES=seeds to measure outcome rates")
	}
	type combo struct {
		sc, strategy string
		counts       map[string]int
	}
	var combos []*combo
	only := os.Getenv("LOCKLAB_RATES_SCENARIOS") // comma-separated; empty: all
	for _, sc := range scenario.Catalogue() {
		if only != "" && !slices.Contains(strings.Split(only, ","), sc.Name) {
			continue
		}
		for _, st := range sc.Strategies {
			if scenario.NeedsServer(st, store.Servers{}) != "" {
				continue // a server locklab cannot start itself (a URL flag)
			}
			combos = append(combos, &combo{sc: sc.Name, strategy: st, counts: map[string]int{}})
		}
	}
	speed, _ := strconv.ParseFloat(os.Getenv("LOCKLAB_RATES_SPEED"), 64)
	if speed <= 0 {
		speed = 1
	}
	par, _ := strconv.Atoi(os.Getenv("LOCKLAB_RATES_PAR"))
	if par <= 0 {
		par = 4
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for _, c := range combos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sc, _ := scenario.Lookup(c.sc)
			for seed := range n {
				p := sc.Defaults
				if c.strategy == "redlock" {
					p.Nodes = 5
				}
				r := runAt(t, nil, speed, scenario.Config{Scenario: c.sc, Strategy: c.strategy, Seed: uint64(seed), Params: p})
				c.counts[verdictClass(r.Summary().Verdict)]++
			}
		}()
	}
	wg.Wait()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| scenario | strategy | outcomes over %d seeds at %g× |\n|---|---|---|\n", n, speed)
	for _, c := range combos {
		var parts []string
		for v, k := range c.counts {
			parts = append(parts, fmt.Sprintf("%s %d%%", v, k*100/n))
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.sc, c.strategy, strings.Join(parts, ", "))
	}
	t.Log(b.String())
}

var counts = regexp.MustCompile(`\d+ `)

// verdictClass drops a verdict's details and counts: "DEADLOCK, then 2
// OVERLAP(S)" is "DEADLOCK, then OVERLAP(S)".
func verdictClass(v string) string {
	v, _, _ = strings.Cut(v, " —")
	return strings.TrimSpace(counts.ReplaceAllString(v, ""))
}
