package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the tables, the advice and what was left out, for
// people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "locklab bench · %s · %s a cell in %d round(s), each beside its server's ceiling · each worker on a key of its own\n",
		r.Store, ms(r.DurationMS), r.Rounds)
	fmt.Fprintf(w, "load average %s at the start, %s at the end · %d cores · %s\n", r.Env.LoadStart, r.Env.LoadEnd, r.Env.Cores, r.Env.CPU)
	fmt.Fprintln(w, "cycles/s: median of the rounds [least–most] · ×ceiling: median of the rounds' ratios to the server's cheapest round trip, taken within each round")
	fmt.Fprintf(w, "above %.2f× is impossible for a lock cycle: such a cell is noise (the load moved), not a result · p50 p99 p999: acquire latency\n", Bound)
	if len(r.AutoPipeline) > 0 {
		fmt.Fprintln(w, "+ap: through go-redis's AutoPipeline client (its ceiling: SET through it)")
	}
	fmt.Fprintln(w)
	rows := append(append([]Series{}, r.Ceilings...), r.Results...)
	width := len("strategy")
	for _, s := range rows {
		width = max(width, len(label(s.Name)))
	}
	pad := func(name string) string { return fmt.Sprintf("%-*s", width, name) }
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pad("strategy")+"\tworkers\tcycles/s\t[least–most]\tceiling/s\t×ceiling\t[least–most]\tp50\tp99\tp999\t")
	for k, s := range rows {
		if k == len(r.Ceilings) && k > 0 {
			fmt.Fprintln(tw, pad("")+"\t\t\t\t\t\t\t\t\t\t")
		}
		name := label(s.Name)
		for i, c := range s.Cells {
			if i > 0 {
				name = ""
			}
			ratio, span, ceil := "—", "", "—"
			if c.Ceiling != "" {
				ceil = rate(c.CeilingPerSec)
				ratio, span = times(c.Ratio), "["+times(c.RatioMin)+"–"+times(c.RatioMax)+"]"
				if c.Noise {
					ratio = "noise"
				}
			}
			lat := []string{us(c.P50), us(c.P99), us(c.P999)}
			if k < len(r.Ceilings) { // a ceiling's own row: no lock
				ratio, span, ceil, lat = "", "", "", []string{"", "", ""}
			}
			row := fmt.Sprintf("%s\t%d\t%s\t[%s–%s]\t%s\t%s\t%s\t%s\t%s\t%s\t", pad(name), c.Workers, rate(c.PerSec), rate(c.Min), rate(c.Max),
				ceil, ratio, span, lat[0], lat[1], lat[2])
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
	r.writeAdvice(w)
}

// writeAdvice writes what the figures allow saying, and only that.
func (r *Report) writeAdvice(w io.Writer) {
	if noisy := r.Noisy(); len(noisy) > 0 {
		fmt.Fprintf(w, "\nnoise, not results (above %.2f× their ceiling): %s — measure again on a quieter machine, or with more --rounds\n",
			Bound, strings.Join(noisy, ", "))
	}
	if len(r.Fastest) > 0 {
		fmt.Fprintln(w, "\nfastest (its slowest round beat every other strategy's fastest):")
		for _, p := range r.Fastest {
			if p.Strategy != "" {
				fmt.Fprintf(w, "  at %-12s %s\n", workers(p.Workers)+":", label(p.Strategy))
				continue
			}
			var names []string
			for _, n := range p.Close {
				names = append(names, label(n))
			}
			fmt.Fprintf(w, "  at %-12s no clear winner: %s are within each other's spread\n", workers(p.Workers)+":", strings.Join(names, ", "))
		}
	}
	if len(r.AutoPipeline) > 0 {
		fmt.Fprintln(w, "\nAutoPipeline (go-redis) ÷ plain client, medians; a verdict only beyond the spread:")
		for _, a := range r.AutoPipeline {
			var gains []string
			for i, g := range a.Gain {
				gains = append(gains, fmt.Sprintf("%s× at %d (%s)", times(g), r.Workers[i], a.Verdict[i]))
			}
			verdict := "no win beyond the spread: keep the plain client"
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

// label is a series' name in a table: +ap for AutoPipeline.
func label(name string) string { return strings.Replace(name, AutoPipelined, "+ap", 1) }
