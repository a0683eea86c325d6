package scenario_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
)

// paceCase is one story the view can open: a scenario, a strategy, and the
// part (Redlock) or lock order (deadlock) it plays.
type paceCase struct {
	sc       *scenario.Scenario
	strategy string
	p        event.Params
	label    string
}

func paceCases() []paceCase {
	var out []paceCase
	for _, sc := range scenario.Catalogue() {
		if sc.RealTime != "" {
			continue // keeps real time: no simulated length to measure
		}
		variants := []event.Params{sc.Defaults}
		var tags []string
		tags = append(tags, "")
		switch sc.Name {
		case "redlock":
			for _, c := range event.PartChoices()[1:] {
				p := sc.Defaults
				p.Part = c.Name
				variants, tags = append(variants, p), append(tags, "part "+c.Name)
			}
			p := sc.Defaults
			p.Part, p.Clock = "clock", "slew"
			variants, tags = append(variants, p), append(tags, "part clock, slew")
		case "deadlock":
			for _, o := range event.Orders[1:] {
				p := sc.Defaults
				p.Order = o
				variants, tags = append(variants, p), append(tags, "order "+o)
			}
		}
		for _, strategy := range sc.Strategies {
			if info, ok := lock.Lookup(strategy); ok && info.Server != lock.ServerRedis || scenario.WallClock(strategy) != "" {
				continue // on a server that keeps its own time (a file, a semaphore, Postgres, …), or a library on the wall clock: not simulated
			}
			for i, p := range variants {
				label := sc.Name + "/" + strategy
				if tags[i] != "" {
					label += " (" + tags[i] + ")"
				}
				out = append(out, paceCase{sc, strategy, p, label})
			}
		}
	}
	return out
}

// TestEveryStoryLastsAWatchableTime: every scenario × strategy × part,
// opened in the view at its opening speed, tells its story in 5 to 20 s of
// wall time: the virtual length of a simulated run (its last event's time)
// over the speed. No wall clock is read: the runs are simulations.
func TestEveryStoryLastsAWatchableTime(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every story")
	}
	cases := paceCases()
	lengths := make([]time.Duration, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := runAt(t, nil, 10, scenario.Config{Scenario: c.sc.Name, Strategy: c.strategy, Seed: 42, Params: c.p})
			if !r.Simulated() {
				t.Errorf("%s: not a simulation: its length would be the machine's", c.label)
				return
			}
			if n := r.Log.Len(); n > 0 {
				lengths[i] = r.Log.At(n - 1).T
			}
		}()
	}
	wg.Wait()
	var rows []string
	for i, c := range cases {
		speed := c.sc.OpeningSpeed(c.strategy, c.p)
		wall := time.Duration(float64(lengths[i]) / speed)
		rows = append(rows, fmt.Sprintf("%-48s %10v at %g× = %v", c.label, lengths[i], speed, wall.Round(10*time.Millisecond)))
		if wall < 5*time.Second || wall > 20*time.Second {
			t.Errorf("%s: its story lasts %v of virtual time; at %g× it is %v on screen, want 5–20 s", c.label, lengths[i], speed, wall.Round(10*time.Millisecond))
		}
	}
	sort.Strings(rows)
	t.Logf("%d stories:\n%s", len(cases), strings.Join(rows, "\n"))
}
