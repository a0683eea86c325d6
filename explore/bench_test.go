package explore_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/scenario"
)

func oversell(strategy string, workers int) scenario.Config {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = workers
	return scenario.Config{Scenario: "oversell", Strategy: strategy, Params: p}
}

// BenchmarkRun is one seed of oversell with 10 workers, as a sweep runs it.
func BenchmarkRun(b *testing.B) {
	cfg := oversell("naive", 10)
	for i := range b.N {
		cfg.Seed = uint64(i)
		if _, err := explore.Run(context.Background(), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedlock(b *testing.B) {
	cfg := oversell("redlock", 10)
	cfg.Params.Nodes = 5
	for i := range b.N {
		cfg.Seed = uint64(i)
		if _, err := explore.Run(context.Background(), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunNone is one seed of oversell with no lock: every worker
// sells, and the checker has overlaps and lost updates to find.
func BenchmarkRunNone(b *testing.B) {
	cfg := oversell("none", 10)
	for i := range b.N {
		cfg.Seed = uint64(i)
		if _, err := explore.Run(context.Background(), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}
