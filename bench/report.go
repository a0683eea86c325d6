package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Report is a bench run: every strategy's cells beside its server's
// ceiling, what the AutoPipeline client gains, which strategy is fastest,
// and where and when it ran. It is the --json output.
type Report struct {
	Format     string `json:"format"` // "locklab-bench"
	Version    int    `json:"version"`
	Store      string `json:"store"`
	Env        Env    `json:"env"`
	DurationMS int64  `json:"duration_ms"` // each cell's measured time, over its rounds
	Rounds     int    `json:"rounds"`
	Workers    []int  `json:"workers"`
	// Ceilings are the servers' cheapest round trips, each at every
	// concurrency, from the rounds interleaved with the cells.
	Ceilings     []Series `json:"ceilings"`
	Results      []Series `json:"results"`
	AutoPipeline []Advice `json:"autopipeline,omitempty"`
	Fastest      []Pick   `json:"fastest,omitempty"`
	// Safety is what a short run of each strategy showed; Need what the
	// closing "what to pick" ranks for.
	Safety  []Safety  `json:"safety,omitempty"`
	Need    string    `json:"need,omitempty"`
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// Series is one strategy (or ceiling) at each concurrency.
type Series struct {
	Name string `json:"strategy"`
	// Server is where its lock lives: redis, file, ipc, postgres, …
	Server string `json:"server"`
	Cells  []Cell `json:"cells"`
}

// Cell is one strategy at one concurrency, over its rounds.
type Cell struct {
	Workers int   `json:"workers"`
	Rounds  int   `json:"rounds"`
	Cycles  int64 `json:"cycles"` // measured cycles, every round
	// PerSec is the rounds' median rate (cycles/s), Min and Max their
	// spread.
	PerSec float64 `json:"per_sec"`
	Min    float64 `json:"per_sec_min"`
	Max    float64 `json:"per_sec_max"`
	P50    float64 `json:"acquire_p50_us,omitempty"`
	P99    float64 `json:"acquire_p99_us,omitempty"`
	P999   float64 `json:"acquire_p999_us,omitempty"`
	// Ceiling names the server's ceiling ("" for a lock with no round
	// trip); CeilingPerSec is its median rate in the same rounds. Ratio is
	// the median of the rounds' ratios (each taken within its round),
	// RatioMin and RatioMax their spread.
	Ceiling       string  `json:"ceiling,omitempty"`
	CeilingPerSec float64 `json:"ceiling_per_sec,omitempty"`
	Ratio         float64 `json:"ratio_to_ceiling,omitempty"`
	RatioMin      float64 `json:"ratio_min,omitempty"`
	RatioMax      float64 `json:"ratio_max,omitempty"`
	// Noise: the ratio is above the physical Bound — the machine's
	// load moved between the bursts; the cell is not a result.
	Noise bool `json:"noise,omitempty"`
	// Samples are the raw rounds.
	Samples []Sample `json:"samples"`
	// Denied counts attempts the lock refused though nobody else held
	// the key (Redlock: too few votes in time).
	Denied int64  `json:"denied,omitempty"`
	Failed int64  `json:"failed,omitempty"` // cycles that failed (any round)
	Error  string `json:"error,omitempty"`  // the first failure
}

// Sample is one round of a cell: its rate and its ceiling's.
type Sample struct {
	PerSec        float64 `json:"per_sec"`
	CeilingPerSec float64 `json:"ceiling_per_sec,omitempty"`
}

// Advice compares a strategy through the AutoPipeline client with the
// plain one at each concurrency: the gain (median ÷ median) and whether it
// is beyond the spread (Verdict "wins" when AutoPipeline's slowest round
// beat the plain client's fastest, "loses" the other way, else "within
// the spread"); WinsFrom is the fewest workers from which it wins at every
// higher count measured (0: it never does).
type Advice struct {
	Strategy string    `json:"strategy"`
	Gain     []float64 `json:"gain"`    // by Workers
	Verdict  []string  `json:"verdict"` // by Workers
	WinsFrom int       `json:"wins_from_workers"`
}

// Pick is the fastest strategy at a concurrency, when its slowest round
// beat every other strategy's fastest; else Close lists the strategies
// within the spread of each other at the top.
type Pick struct {
	Workers  int      `json:"workers"`
	Strategy string   `json:"strategy,omitempty"`
	Close    []string `json:"within_spread,omitempty"`
}

// LeftOut is a strategy not measured, and why.
type LeftOut struct {
	Strategy string `json:"strategy"`
	Reason   string `json:"reason"`
}

// derive fills the AutoPipeline advice and the fastest picks.
func (r *Report) derive() {
	for i := range r.Results {
		p := &r.Results[i]
		ap := r.series(p.Name + AutoPipelined)
		if ap == nil {
			continue
		}
		a := Advice{Strategy: p.Name}
		for k, c := range p.Cells {
			g, v := 0.0, "within the spread"
			if k < len(ap.Cells) && c.PerSec > 0 {
				o := ap.Cells[k]
				g = o.PerSec / c.PerSec
				switch {
				case o.Min > c.Max:
					v = "wins"
				case c.Min > o.Max:
					v = "loses"
				}
			}
			a.Gain, a.Verdict = append(a.Gain, g), append(a.Verdict, v)
		}
		for k := len(a.Verdict) - 1; k >= 0 && a.Verdict[k] == "wins"; k-- {
			a.WinsFrom = p.Cells[k].Workers
		}
		r.AutoPipeline = append(r.AutoPipeline, a)
	}
	for k, w := range r.Workers {
		var cand []Series
		for _, s := range r.Results {
			if k < len(s.Cells) && s.Cells[k].PerSec > 0 && s.Cells[k].Error == "" {
				cand = append(cand, s)
			}
		}
		if len(cand) < 2 {
			continue
		}
		slices.SortStableFunc(cand, func(a, b Series) int { return cmp.Compare(b.Cells[k].PerSec, a.Cells[k].PerSec) })
		top := cand[0].Cells[k]
		p := Pick{Workers: w}
		for _, s := range cand[1:] {
			if s.Cells[k].Max >= top.Min {
				p.Close = append(p.Close, s.Name)
			}
		}
		if len(p.Close) == 0 {
			p.Strategy = cand[0].Name
		} else {
			p.Close = append([]string{cand[0].Name}, p.Close...)
		}
		r.Fastest = append(r.Fastest, p)
	}
}

// series finds a result by name.
func (r *Report) series(name string) *Series {
	for i := range r.Results {
		if r.Results[i].Name == name {
			return &r.Results[i]
		}
	}
	return nil
}

// Failed lists the cells where cycles failed: "redlock at 128 workers: 3
// cycle(s) failed, the first: …".
func (r *Report) Failed() []string {
	var out []string
	for _, s := range r.Results {
		for _, c := range s.Cells {
			if c.Error != "" {
				out = append(out, fmt.Sprintf("%s at %s: %d cycle(s) failed, the first: %s", s.Name, workers(c.Workers), c.Failed, c.Error))
			}
		}
	}
	return out
}

// Noisy lists the cells whose ratio is above the physical bound.
func (r *Report) Noisy() []string {
	var out []string
	for _, s := range r.Results {
		for _, c := range s.Cells {
			if c.Noise {
				out = append(out, fmt.Sprintf("%s at %s", s.Name, workers(c.Workers)))
			}
		}
	}
	return out
}

func workers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return strconv.Itoa(n) + " workers"
}

// rate is a count per second in three significant digits: 812, 41.2k, 1.05M.
func rate(v float64) string {
	// Rounded to its digits first, then told again: 9999.6 is 10.0k.
	three := func(x float64) string {
		d := digits(x)
		p := math.Pow(10, float64(d))
		x = math.Round(x*p) / p
		return strconv.FormatFloat(x, 'f', digits(x), 64)
	}
	switch v = math.Round(v); {
	case v >= 999.5e3:
		return three(v/1e6) + "M"
	case v >= 999.5:
		return three(v/1e3) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func digits(v float64) int {
	switch {
	case v >= 100:
		return 0
	case v >= 10:
		return 1
	}
	return 2
}

func times(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) }

// us is a latency in microseconds, shortened: 21µs, 1.2ms.
func us(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "s"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "µs"
}

func ms(v int64) string {
	if v%1000 == 0 {
		return strconv.FormatInt(v/1000, 10) + "s"
	}
	return strconv.FormatInt(v, 10) + "ms"
}
