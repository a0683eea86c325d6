package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Needs are what "what to pick" can rank for.
var Needs = []string{"safety", "speed", "no-ttl"}

// WriteSafety writes what the short safety run showed of each strategy.
func (r *Report) WriteSafety(w io.Writer) {
	if len(r.Safety) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsafety, from a short run of each (TTL %s; the other waited up to %s):\n", ms(r.Safety[0].TTLMS), ms(r.Safety[0].BoundMS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  strategy\tholder paused past its TTL\tfences stale writes\tcrashed holder's lock\twhere")
	for _, s := range r.Safety {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.Strategy, pauseWords(s), fenceWords(s), crashWords(s), whereWords(s))
		if s.Error != "" {
			fmt.Fprintf(tw, "  \t(%s)\t\t\t\n", clean(s.Error, 120))
		}
	}
	tw.Flush()
}

func pauseWords(s Safety) string {
	switch {
	case !s.Excludes:
		return "no exclusion: writes checked"
	case s.SecondHolderMS < 0:
		return "survives: others waited " + ms(s.BoundMS)
	}
	return "2nd holder after " + msf(s.SecondHolderMS)
}

func fenceWords(s Safety) string {
	switch {
	case s.Fences:
		return fmt.Sprintf("yes: %d → %d", s.FencePaused, s.FenceNext)
	case !s.Excludes || s.SecondHolderMS < 0:
		return "—"
	}
	return "no"
}

func crashWords(s Safety) string {
	if s.DeadFreedMS < 0 {
		return "held past " + ms(s.BoundMS)
	}
	return "free after " + msf(s.DeadFreedMS)
}

func whereWords(s Safety) string {
	if s.OneMachine {
		return "one machine only"
	}
	return "a server"
}

// msf is a measured time in milliseconds: 12 ms, 1.02 s.
func msf(v float64) string {
	if v >= 999.5 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// pick is a strategy with its speed and safety, for the ranking.
type pick struct {
	s     Safety
	speed Cell
	score int
}

// WritePicks writes "what to pick" for need, each claim with its number
// from this run.
func (r *Report) WritePicks(w io.Writer, need string) {
	if len(r.Safety) == 0 || len(r.Workers) == 0 {
		return
	}
	last := len(r.Workers) - 1
	var ps []pick
	for _, s := range r.Safety {
		p := pick{s: s}
		if se := r.series(s.Strategy); se != nil && last < len(se.Cells) {
			p.speed = se.Cells[last]
		}
		switch need {
		case "safety": // never two holders unnoticed, and a crash frees the lock
			p.score = btoi(s.Excludes && (s.SecondHolderMS < 0 || s.Fences))*2 + btoi(s.DeadFreedMS >= 0) + btoi(!s.OneMachine)
		case "no-ttl": // no TTL to choose: a pause keeps it, a crash frees it
			p.score = btoi(s.Excludes && s.SecondHolderMS < 0)*2 + btoi(s.DeadFreedMS >= 0 && s.DeadFreedMS < float64(s.TTLMS))*2 + btoi(!s.OneMachine)
		}
		ps = append(ps, p)
	}
	slices.SortStableFunc(ps, func(a, b pick) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.speed.PerSec, a.speed.PerSec))
	})
	fmt.Fprintf(w, "\nwhat to pick for %s (--need %s):\n", need, strings.Join(Needs, "|"))
	full := map[string]int{"safety": 4, "no-ttl": 5}[need]
	if full > 0 && ps[0].score < full {
		fmt.Fprintf(w, "  none measured meets it fully (%s); the closest:\n", needWords[need])
	}
	for i, p := range ps {
		if full > 0 && i > 0 && ps[i-1].score == full && p.score < full {
			fmt.Fprintf(w, "  falling short of it (%s):\n", needWords[need])
		}
		if i == 5 {
			fmt.Fprintf(w, "  … and %d more in the safety table above\n", len(ps)-i)
			break
		}
		speed := "no cycles measured"
		if p.speed.PerSec > 0 {
			speed = fmt.Sprintf("%s cycles/s [%s–%s] at %s", rate(p.speed.PerSec), rate(p.speed.Min), rate(p.speed.Max), workers(p.speed.Workers))
		}
		fmt.Fprintf(w, "  %d. %-18s %s\n     pause: %s · fence: %s · crash: %s · %s\n", i+1, p.s.Strategy, speed,
			pauseWords(p.s), fenceWords(p.s), crashWords(p.s), whereWords(p.s))
	}
	if need == "speed" && len(ps) > 1 && ps[1].speed.Max >= ps[0].speed.Min {
		fmt.Fprintf(w, "  (1 and 2 are within each other's spread: %s and %s are as fast on this run)\n", ps[0].s.Strategy, ps[1].s.Strategy)
	}
}

// needWords say what meeting a need fully takes.
var needWords = map[string]string{
	"safety": "no second holder during a pause, or a larger fence for it; a crash frees the lock; on a server",
	"no-ttl": "a pause keeps the lock, a crash frees it before a TTL would; on a server",
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
