package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func parts(rates ...float64) []burstResult {
	var out []burstResult
	for _, r := range rates {
		out = append(out, burstResult{cycles: 1, perSec: r})
	}
	return out
}

// A cycle faster than its server's one round trip is noise, never a
// result; one slower is a ratio with its spread.
func TestCellFlagsARatioAboveTheBound(t *testing.T) {
	t.Parallel()
	c := cellOf(1, "redis SET", parts(900, 1100, 1000), []float64{800, 900, 1000}, nil)
	if !c.Noise || c.Ratio <= Bound {
		t.Errorf("cycles at 1.1× their SET: noise %v, ratio %v; want noise", c.Noise, c.Ratio)
	}
	c = cellOf(1, "redis SET", parts(400, 500, 450), []float64{1000, 1000, 1000}, nil)
	if c.Noise || c.Ratio != 0.45 || c.RatioMin != 0.4 || c.RatioMax != 0.5 || c.PerSec != 450 || c.Min != 400 || c.Max != 500 {
		t.Errorf("cell %+v: want ratio 0.45 [0.4–0.5], 450/s [400–500], no noise", c)
	}
	if len(c.Samples) != 3 || c.Samples[2].CeilingPerSec != 1000 {
		t.Errorf("raw samples %+v", c.Samples)
	}
	r := &Report{Workers: []int{1}, Results: []Series{{Name: "safe", Cells: []Cell{cellOf(1, "redis SET", parts(900, 1100, 1000), []float64{800, 900, 1000}, nil)}}}}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "noise") || strings.Contains(b.String(), "1.1") && !strings.Contains(b.String(), "noise, not results") {
		t.Errorf("the table shows a ratio above the bound as a result:\n%s", b.String())
	}
}

func cell(w int, lo, med, hi float64) Cell {
	return Cell{Workers: w, PerSec: med, Min: lo, Max: hi}
}

// Advice is given only where the difference is beyond the spread.
func TestAdviceOnlyBeyondTheSpread(t *testing.T) {
	t.Parallel()
	r := &Report{Workers: []int{1, 32}, Results: []Series{
		{Name: "safe", Cells: []Cell{cell(1, 100, 150, 200), cell(32, 100, 150, 200)}},
		{Name: "safe" + AutoPipelined, Cells: []Cell{cell(1, 150, 200, 250), cell(32, 210, 230, 250)}},
		{Name: "fenced", Cells: []Cell{cell(1, 90, 120, 130), cell(32, 20, 30, 40)}},
	}}
	r.derive()
	if len(r.AutoPipeline) != 1 || !slices.Equal(r.AutoPipeline[0].Verdict, []string{"within the spread", "wins"}) || r.AutoPipeline[0].WinsFrom != 32 {
		t.Errorf("AutoPipeline advice %+v: want within the spread at 1, wins from 32", r.AutoPipeline)
	}
	if len(r.Fastest) != 2 || r.Fastest[0].Strategy != "" || !slices.Equal(r.Fastest[0].Close, []string{"safe" + AutoPipelined, "safe"}) || r.Fastest[1].Strategy != "safe"+AutoPipelined {
		t.Errorf("fastest %+v: want no clear winner at 1 (safe and safe+ap overlap; fenced is slower beyond the spread), safe+ap at 32", r.Fastest)
	}
}

// The progress tells each cell, of how many, and the time left.
func TestProgressCountsDown(t *testing.T) {
	t.Parallel()
	var got []Progress
	idle := func(int) func(context.Context, int) (cycle, error) {
		return func(context.Context, int) (cycle, error) {
			return func(context.Context) (time.Duration, error) { return 0, nil }, nil
		}
	}
	m := &meter{cfg: Config{Workers: []int{1, 2}, Duration: time.Millisecond, Rounds: 1,
		Progress: func(p Progress) { got = append(got, p) }}, cells: 4, ceilings: map[ceilingKey][]float64{}}
	for range 2 {
		if _, err := m.series(context.Background(), job{name: "x", fresh: idle}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 4 || got[0].Cell != 1 || got[3].Cell != 4 || got[0].Cells != 4 || got[0].Left <= got[3].Left || got[3].Left <= 0 || got[1].Workers != 2 {
		t.Errorf("progress %+v", got)
	}
}

func TestRateHasThreeDigits(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{812: "812", 999.6: "1.00k", 9999.6: "10.0k", 41234: "41.2k", 99960: "100k", 1.05e6: "1.05M", 999999: "1.00M"} {
		if got := rate(v); got != want {
			t.Errorf("rate(%v) = %q, want %q", v, got, want)
		}
	}
}
