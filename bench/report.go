package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is a bench run: the ceiling, every strategy's cells, and what the
// AutoPipeline client gains. It is the --json output.
type Report struct {
	Format     string `json:"format"` // "locklab-bench"
	Version    int    `json:"version"`
	Store      string `json:"store"`
	DurationMS int64  `json:"duration_ms"` // each cell's measured time
	Workers    []int  `json:"workers"`
	// Ceiling is the server's plain SET rate (plain client) at each
	// concurrency; every other cell also has its own, measured right
	// before it (set_per_sec), which its ratio_to_set divides by.
	Ceiling Series `json:"ceiling"`
	// CeilingAutoPipelined is SET through the AutoPipeline client.
	CeilingAutoPipelined *Series   `json:"ceiling_autopipeline,omitempty"`
	Results              []Series  `json:"results"`
	AutoPipeline         []Advice  `json:"autopipeline,omitempty"`
	LeftOut              []LeftOut `json:"left_out,omitempty"`
}

// Series is one strategy (or SET) at each concurrency.
type Series struct {
	Name string `json:"strategy"`
	// Server is where its lock lives: redis, file, ipc, postgres, …
	Server string `json:"server"`
	Cells  []Cell `json:"cells"`
}

// Cell is one strategy at one concurrency.
type Cell struct {
	Workers int     `json:"workers"`
	Cycles  int64   `json:"cycles"`  // measured cycles (SET: commands)
	PerSec  float64 `json:"per_sec"` // cycles per second
	P50     float64 `json:"acquire_p50_us"`
	P99     float64 `json:"acquire_p99_us"`
	P999    float64 `json:"acquire_p999_us"`
	// SetPerSec is the plain SET rate at the same concurrency, measured
	// right before this cell; Ratio is PerSec over it.
	SetPerSec float64 `json:"set_per_sec"`
	Ratio     float64 `json:"ratio_to_set"`
	// Denied counts attempts the lock refused though nobody else held
	// the key (Redlock: too few votes in time).
	Denied int64  `json:"denied,omitempty"`
	Failed int64  `json:"failed,omitempty"` // cycles that failed (any phase)
	Error  string `json:"error,omitempty"`  // the first failure
}

// Advice compares a strategy through the AutoPipeline client with the
// plain one: the gain (AutoPipeline ÷ plain) at each concurrency, and the
// fewest workers from which it wins at every higher count measured (0:
// it never does).
type Advice struct {
	Strategy string    `json:"strategy"`
	Gain     []float64 `json:"gain"` // by Workers
	WinsFrom int       `json:"wins_from_workers"`
}

// LeftOut is a strategy not measured, and why.
type LeftOut struct {
	Strategy string `json:"strategy"`
	Reason   string `json:"reason"`
}

// derive fills the ratios and the AutoPipeline advice.
func (r *Report) derive() {
	ratio := func(s *Series) {
		for i := range s.Cells {
			c := &s.Cells[i]
			if c.SetPerSec == 0 && i < len(r.Ceiling.Cells) {
				c.SetPerSec = r.Ceiling.Cells[i].PerSec
			}
			if c.SetPerSec > 0 {
				c.Ratio = c.PerSec / c.SetPerSec
			}
		}
	}
	ratio(&r.Ceiling)
	if r.CeilingAutoPipelined != nil {
		ratio(r.CeilingAutoPipelined)
	}
	for i := range r.Results {
		ratio(&r.Results[i])
	}
	pairs := [][2]*Series{}
	if r.CeilingAutoPipelined != nil {
		pairs = append(pairs, [2]*Series{&r.Ceiling, r.CeilingAutoPipelined})
	}
	for i := range r.Results {
		if ap := r.series(r.Results[i].Name + AutoPipelined); ap != nil {
			pairs = append(pairs, [2]*Series{&r.Results[i], ap})
		}
	}
	for _, p := range pairs {
		a := Advice{Strategy: p[0].Name}
		for i, c := range p[0].Cells {
			g := 0.0
			if i < len(p[1].Cells) && c.PerSec > 0 {
				g = p[1].Cells[i].PerSec / c.PerSec
			}
			a.Gain = append(a.Gain, g)
		}
		for i := len(a.Gain) - 1; i >= 0 && a.Gain[i] > 1; i-- {
			a.WinsFrom = p[0].Cells[i].Workers
		}
		r.AutoPipeline = append(r.AutoPipeline, a)
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
	for _, s := range append([]Series{r.Ceiling}, r.Results...) {
		for _, c := range s.Cells {
			if c.Error != "" {
				out = append(out, fmt.Sprintf("%s at %s: %d cycle(s) failed, the first: %s", s.Name, workers(c.Workers), c.Failed, c.Error))
			}
		}
	}
	return out
}

// CeilingFailed reports whether no SET went through at some concurrency:
// the server is not there to measure.
func (r *Report) CeilingFailed() bool {
	for _, c := range r.Ceiling.Cells {
		if c.Cycles == 0 && c.Error != "" {
			return true
		}
	}
	return false
}

// WriteText writes the tables, the AutoPipeline advice and what was left
// out, for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "locklab bench · %s · %s a cell · each worker cycles on a key of its own\n", r.Store, ms(r.DurationMS))
	fmt.Fprintln(w, "SET/s: the plain SET rate measured right before the cell · p50 p99 p999: acquire latency")
	if r.CeilingAutoPipelined != nil {
		fmt.Fprintln(w, "+ap: through go-redis's AutoPipeline client")
	}
	fmt.Fprintln(w)
	all := append([]Series{r.Ceiling}, r.Results...)
	names := make([]string, len(all))
	width := len("SET (ceiling)")
	for i, s := range all {
		names[i] = strings.Replace(s.Name, AutoPipelined, "+ap", 1)
		width = max(width, len(names[i]))
	}
	names[0] = "SET (ceiling)"
	pad := func(name string) string { return fmt.Sprintf("%-*s", width, name) }
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pad("strategy")+"\tworkers\tcycles/s\tSET/s\t×SET\tp50\tp99\tp999\t")
	for k, s := range all {
		name := names[k]
		for i, c := range s.Cells {
			if i > 0 {
				name = ""
			}
			row := fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t", pad(name), c.Workers, rate(c.PerSec), rate(c.SetPerSec), times(c.Ratio), us(c.P50), us(c.P99), us(c.P999))
			if c.Denied > 0 {
				row += fmt.Sprintf(" %d denied", c.Denied)
			}
			if c.Failed > 0 {
				row += fmt.Sprintf(" %d failed", c.Failed)
			}
			fmt.Fprintln(tw, row)
		}
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimPrefix(line, "  ")) // the names' column is padded, not aligned
	}
	if len(r.AutoPipeline) > 0 {
		fmt.Fprintln(w, "\nAutoPipeline (go-redis) ÷ plain client:")
		for _, a := range r.AutoPipeline {
			var gains []string
			for i, g := range a.Gain {
				gains = append(gains, fmt.Sprintf("%s× at %d", times(g), r.Workers[i]))
			}
			verdict := "the plain client wins: keep it"
			switch {
			case a.WinsFrom > 0 && a.WinsFrom == r.Workers[0]:
				verdict = "AutoPipeline wins at every count measured"
			case a.WinsFrom > 0:
				verdict = fmt.Sprintf("use AutoPipeline from %s", workers(a.WinsFrom))
			}
			fmt.Fprintf(w, "  %-16s %s — %s\n", a.Strategy, strings.Join(gains, ", "), verdict)
		}
	}
	for _, f := range r.Failed() {
		fmt.Fprintln(w, f)
	}
	for _, l := range r.LeftOut {
		fmt.Fprintf(w, "left out %s: %s\n", l.Strategy, l.Reason)
	}
}

func workers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return strconv.Itoa(n) + " workers"
}

// rate is a count per second in three significant digits: 812, 41.2k, 1.05M.
func rate(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', digits(v/1e6), 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', digits(v/1e3), 64) + "k"
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
