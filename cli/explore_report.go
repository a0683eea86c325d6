package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/mattn/go-isatty"
)

// exploreReport is what explore prints, as text or as JSON.
type exploreReport struct {
	Scenario    string         `json:"scenario"`
	Strategy    string         `json:"strategy"`
	Params      event.Params   `json:"params"`
	Faults      string         `json:"faults,omitempty"`
	SeedsAsked  int            `json:"seeds_asked"`
	SeedsRun    int            `json:"seeds_run"`
	Interrupted bool           `json:"interrupted"`
	Jobs        int            `json:"jobs"`
	Seconds     float64        `json:"seconds"`
	SeedsPerSec float64        `json:"seeds_per_second"`
	Verdicts    []exploreRow   `json:"verdicts"`
	Overlaps    map[string]int `json:"overlaps"`
	Lost        map[string]int `json:"lost_updates"`
	Sold        map[string]int `json:"sold,omitempty"`
	Shrunk      []exploreFound `json:"shrunk"`
	args        string         // the flags that set the run, as given
}

type exploreRow struct {
	Verdict   string  `json:"verdict"`
	Example   string  `json:"example"` // the first seed's verdict, with its counts
	Count     int     `json:"count"`
	Share     float64 `json:"share"`
	FirstSeed uint64  `json:"first_seed"`
	Violation bool    `json:"violation"`
	Seen      int     `json:"with_overlaps_or_lost_updates"`
}

// exploreFound is one violation shrunk.
type exploreFound struct {
	Class       string       `json:"verdict"`
	Verdict     string       `json:"example"`
	Scenario    string       `json:"-"`
	Seed        uint64       `json:"seed"`
	Workers     int          `json:"workers"`
	Faults      int          `json:"faults"`
	Events      int          `json:"events"`
	Steps       uint64       `json:"scheduler_steps"`
	Trials      int          `json:"runs_to_shrink"`
	Params      event.Params `json:"params"`
	Schedule    string       `json:"schedule"`
	Log         string       `json:"events_file"`
	Interrupted bool         `json:"interrupted,omitempty"`
}

func newExploreReport(base scenario.Config, res *explore.Result, elapsed time.Duration, jobs int) *exploreReport {
	r := &exploreReport{Scenario: base.Scenario, Strategy: base.Strategy, Params: base.Params, SeedsAsked: res.Asked,
		SeedsRun: res.Done, Interrupted: res.Interrupted, Jobs: jobs, Seconds: elapsed.Seconds(),
		Overlaps: distJSON(res.Overlaps), Lost: distJSON(res.Lost), Shrunk: []exploreFound{}}
	if len(base.Faults) > 0 {
		r.Faults = schedule.Spec(base.Faults)
	}
	if elapsed > 0 {
		r.SeedsPerSec = float64(res.Done) / elapsed.Seconds()
	}
	if res.HasStock {
		r.Sold = distJSON(res.Sold)
	}
	for _, row := range res.Rows {
		r.Verdicts = append(r.Verdicts, exploreRow{Verdict: row.Class, Example: row.First.Verdict, Count: row.Count,
			Share: float64(row.Count) / float64(max(res.Done, 1)), FirstSeed: row.First.Seed, Violation: row.Violation, Seen: row.Seen})
	}
	return r
}

func distJSON(d explore.Dist) map[string]int {
	out := map[string]int{}
	for v, n := range d {
		out[strconv.Itoa(v)] = n
	}
	return out
}

func (r *exploreReport) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// exit is explore's status: 1 when a lock broke (or the sweep was cut
// short), 0 when none did in every seed asked.
func (r *exploreReport) exit(ctx context.Context) error {
	for _, v := range r.Verdicts {
		if v.Violation {
			return runtimeError{fmt.Errorf("the lock broke: %s in %d of %d seeds (first seed %d)", v.Verdict, v.Count, r.SeedsRun, v.FirstSeed)}
		}
	}
	if r.Interrupted || ctx.Err() != nil {
		return runtimeError{fmt.Errorf("interrupted after %d of %d seeds; no violation so far", r.SeedsRun, r.SeedsAsked)}
	}
	return nil
}

func printSweep(w io.Writer, r *exploreReport, res *explore.Result) {
	what := r.Scenario + " --lock " + r.Strategy
	if r.args != "" {
		what += " " + r.args
	}
	fmt.Fprintf(w, "explore %s: %d seeds in %.2f s (%.0f seeds/s, %d jobs)\n", what, r.SeedsRun, r.Seconds, r.SeedsPerSec, r.Jobs)
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted: %d of %d seeds ran; what they found:\n", r.SeedsRun, r.SeedsAsked)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  VERDICT\tSEEDS\tSHARE\tFIRST SEED\tFIRST SEED'S VERDICT")
	for _, v := range r.Verdicts {
		mark := ""
		switch {
		case v.Violation:
			mark = "  ← the lock broke"
		case v.Seen > 0:
			mark = fmt.Sprintf("  (%d of them with overlaps or lost updates all the same)", v.Seen)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t%d\t%s%s\n", v.Verdict, v.Count, 100*v.Share, v.FirstSeed, v.Example, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-13s %s\n", "overlaps", distWords(res.Overlaps))
	fmt.Fprintf(w, "  %-13s %s\n", "lost updates", distWords(res.Lost))
	if res.HasStock {
		fmt.Fprintf(w, "  %-13s %s\n", "sold", distWords(res.Sold))
	}
	fmt.Fprintln(w, "  (value: seeds)")
}

// distWords lists a distribution's values and their seeds, the first few.
func distWords(d explore.Dist) string {
	const most = 12
	vs := d.Values()
	var parts []string
	for i, v := range vs {
		if i == most {
			parts = append(parts, fmt.Sprintf("… %d values more, up to %d", len(vs)-most, vs[len(vs)-1]))
			break
		}
		parts = append(parts, fmt.Sprintf("%d: %d", v, d[v]))
	}
	return strings.Join(parts, "  ")
}

func sizeWords(o explore.Outcome) string {
	return fmt.Sprintf("%d workers, %d events, %d scheduler steps", o.Workers, o.Events, o.Steps)
}

func printFound(w io.Writer, f exploreFound) {
	faults := ""
	if f.Faults > 0 {
		faults = fmt.Sprintf(", %d fault(s)", f.Faults)
	}
	lead := "the shortest way this lock breaks"
	switch {
	case f.Interrupted && f.Trials == 0:
		lead = "\n  interrupted before shrinking; the first seed that broke it"
	case f.Interrupted:
		lead = "interrupted while shrinking; the shortest way found so far"
	}
	found := ""
	if f.Trials > 0 {
		found = fmt.Sprintf(" — found in %d runs", f.Trials)
	}
	fmt.Fprintf(w, "  %s (%s): %d workers%s, %d events (%d scheduler steps), seed %d%s\n",
		lead, f.Class, f.Workers, faults, f.Events, f.Steps, f.Seed, found)
	fmt.Fprintf(w, "    %s\n", f.Verdict)
	fmt.Fprintf(w, "    schedule: %s\n    events:   %s\n", f.Schedule, f.Log)
	fmt.Fprintf(w, "    open it:  locklab run --schedule %s   (or locklab replay %s)\n", f.Schedule, f.Log)
}

// progress draws a bar on standard error when it is a terminal.
type progress struct {
	w     io.Writer
	total int
	on    bool
	last  time.Time
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if c, ok := w.(*checkedWriter); ok {
		if f, ok := c.w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			p.on = true
		}
	}
	return p
}

func (p *progress) update(done int) {
	if !p.on || done < p.total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := width * done / max(p.total, 1)
	fmt.Fprintf(p.w, "\r  %s%s %d/%d seeds", strings.Repeat("█", fill), strings.Repeat("░", width-fill), done, p.total)
}

func (p *progress) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
