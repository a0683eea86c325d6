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
	fmt.Fprintf(w, "locklab bench · %s · %s a cell in %d round(s) beside its server's ceiling\n", r.Store, ms(r.DurationMS), r.Rounds)
	fmt.Fprintf(w, "load average %s → %s · %d cores · %s\n", r.Env.LoadStart, r.Env.LoadEnd, r.Env.Cores, r.Env.CPU)
	fmt.Fprintln(w, "cycles/s: the rounds' median [least–most], each worker on a key of its own")
	fmt.Fprintln(w, "×ceiling: median of each round's ratio to its server's cheapest round trip")
	fmt.Fprintf(w, "above %.2f× is impossible for a lock cycle: noise, not a result\n", Bound)
	if len(r.AutoPipeline) > 0 {
		fmt.Fprintln(w, "p50 p99 p999: acquire latency · +ap: go-redis AutoPipeline (ceiling: SET+ap)")
	} else {
		fmt.Fprintln(w, "p50 p99 p999: acquire latency")
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
	fmt.Fprintln(tw, pad("strategy")+"\tworkers\tcycles/s [least–most]\tceiling/s\t×ceiling [least–most]\tp50\tp99\tp999\t")
	for k, s := range rows {
		if k == len(r.Ceilings) && k > 0 {
			fmt.Fprintln(tw, pad("")+"\t\t\t\t\t\t\t\t")
		}
		name := label(s.Name)
		for i, c := range s.Cells {
			if i > 0 {
				name = ""
			}
			ratio, ceil := "—", "—"
			if c.Ceiling != "" {
				ceil = rate(c.CeilingPerSec)
				ratio = times(c.Ratio) + " [" + times(c.RatioMin) + "–" + times(c.RatioMax) + "]"
				if c.Noise {
					ratio = "noise " + ratio
				}
			}
			lat := []string{us(c.P50), us(c.P99), us(c.P999)}
			if k < len(r.Ceilings) { // a ceiling's own row: no lock
				ratio, ceil, lat = "", "", []string{"", "", ""}
			}
			row := fmt.Sprintf("%s\t%d\t%s [%s–%s]\t%s\t%s\t%s\t%s\t%s\t", pad(name), c.Workers, rate(c.PerSec), rate(c.Min), rate(c.Max),
				ceil, ratio, lat[0], lat[1], lat[2])
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
	r.WriteSafety(w)
	if r.Need != "" {
		r.WritePicks(w, r.Need)
	}
}

// writeAdvice writes what the figures allow saying, and only that.
func (r *Report) writeAdvice(w io.Writer) {
	if noisy := r.Noisy(); len(noisy) > 0 {
		fmt.Fprintf(w, "\nnoise, not results (above %.2f× their ceiling): %s\n", Bound, strings.Join(noisy, ", "))
		fmt.Fprintln(w, "  measure again on a quieter machine, or with more --rounds")
	}
	if len(r.Fastest) > 0 {
		fmt.Fprintln(w, "\nfastest (only where its slowest round beat every other's fastest):")
		for _, p := range r.Fastest {
			if p.Strategy != "" {
				fmt.Fprintf(w, "  at %-12s %s\n", workers(p.Workers)+":", label(p.Strategy))
				continue
			}
			var names []string
			for _, n := range p.Close {
				names = append(names, label(n))
			}
			fmt.Fprintf(w, "  at %-12s none clear: %s within each other's spread\n", workers(p.Workers)+":", strings.Join(names, ", "))
		}
	}
	if len(r.AutoPipeline) > 0 {
		fmt.Fprintln(w, "\nAutoPipeline ÷ plain client (medians; * beyond the spread):")
		for _, a := range r.AutoPipeline {
			var gains []string
			for i, g := range a.Gain {
				star := ""
				if a.Verdict[i] != "within the spread" {
					star = "*"
				}
				gains = append(gains, fmt.Sprintf("%s×%s at %d", times(g), star, r.Workers[i]))
			}
			verdict := "no win beyond the spread"
			switch {
			case a.WinsFrom > 0 && a.WinsFrom == r.Workers[0]:
				verdict = "AutoPipeline wins at every count measured"
			case a.WinsFrom > 0:
				verdict = fmt.Sprintf("use AutoPipeline from %s", workers(a.WinsFrom))
			}
			fmt.Fprintf(w, "  %-16s %s\n  %-16s → %s\n", a.Strategy, strings.Join(gains, ", "), "", verdict)
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
