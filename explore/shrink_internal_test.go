package explore

import (
	"testing"

	"github.com/locklab/locklab/scenario"
)

// After fewer workers and less stock alone, the smaller cases lower both
// together, in proportion.
func TestSmallerLowersWorkersAndStockTogether(t *testing.T) {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.Stock = 10, 5
	cs := smaller(scenario.Config{Scenario: "oversell", Strategy: "naive", Params: p}, Outcome{HasStock: true})
	// 3 fewer-workers cases, 3 less-stock cases, then together.
	want := [][2]int64{{1, 1}, {5, 2}, {9, 4}}
	for i, w := range want {
		j := 6 + i
		if j >= len(cs) || int64(cs[j].Params.Workers) != w[0] || cs[j].Params.Stock != w[1] {
			t.Fatalf("case %d: %+v, want %d workers and %d in stock", j, cs[min(j, len(cs)-1)].Params, w[0], w[1])
		}
	}
}
