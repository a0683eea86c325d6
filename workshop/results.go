package workshop

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// Standing is one participant's line on a room's leaderboard, summed over
// the finished rounds they raced in: every figure is the tally's, as on
// each round's scoreboard (a violation is counted once, against the lane
// that walked in second).
type Standing struct {
	Name       string `json:"name"`
	Rounds     int    `json:"rounds"`
	Did        int    `json:"did"`
	Denials    int    `json:"denied"`
	Violations int    `json:"violations"`
}

// finished are the runs that have ended, in order.
func finished(runs []*scenario.Run) []*scenario.Run {
	var out []*scenario.Run
	for _, r := range runs {
		if isFinished(r) {
			out = append(out, r)
		}
	}
	return out
}

func isFinished(r *scenario.Run) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// Renamed is the latest name of whoever raced as name in round n.
func Renamed(name string, n int, renames []Rename) string {
	for _, r := range renames {
		if r.Before > n && r.From == name {
			name = r.To
		}
	}
	return name
}

// Leaderboard sums the finished rounds' scoreboards: most done first, then
// fewest violations, then fewest denials, then by name. runs are the
// room's rounds in order (round 1 first); a participant who renamed
// themselves is one line, under their latest name.
func Leaderboard(runs []*scenario.Run, renames []Rename) []Standing {
	idx := map[string]int{}
	var out []Standing
	for n, r := range runs {
		if !isFinished(r) {
			continue
		}
		for _, s := range scenario.Scores(r.Header, r.Log.Events()) {
			name := Renamed(s.Name, n+1, renames)
			i, ok := idx[name]
			if !ok {
				i = len(out)
				idx[name] = i
				out = append(out, Standing{Name: name})
			}
			st := &out[i]
			st.Rounds++
			st.Did += s.Did
			st.Denials += s.Denials
			st.Violations += s.Violations
		}
	}
	slices.SortStableFunc(out, func(a, b Standing) int {
		switch {
		case a.Did != b.Did:
			return b.Did - a.Did
		case a.Violations != b.Violations:
			return a.Violations - b.Violations
		case a.Denials != b.Denials:
			return a.Denials - b.Denials
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// roundResult is one round as the results keep it.
type roundResult struct {
	N            int               `json:"n"`
	Scenario     string            `json:"scenario"`
	Strategy     string            `json:"strategy"`
	Params       event.Params      `json:"params"`
	Seed         uint64            `json:"seed"`
	Verdict      string            `json:"verdict"`
	Summary      *check.Summary    `json:"summary"`
	Participants []scenario.Score  `json:"participants"`
	Events       []json.RawMessage `json:"events"`
}

// Results are a room's rounds and leaderboard, to keep and share.
type Results struct {
	Room        string        `json:"room"`
	Rounds      []roundResult `json:"rounds"`
	Leaderboard []Standing    `json:"leaderboard"`
	// Renames are the participants' name changes: each round's figures
	// are under the name raced with, the leaderboard's under the latest.
	Renames []Rename `json:"renames"`
}

// Collect gathers the finished rounds' results.
func Collect(room string, runs []*scenario.Run, renames []Rename) *Results {
	res := &Results{Room: room, Leaderboard: Leaderboard(runs, renames), Renames: renames}
	for i, r := range finished(runs) {
		sum := r.Summary()
		evs := r.Log.Events()
		rr := roundResult{N: i + 1, Scenario: r.Header.Scenario, Strategy: r.Header.Strategy, Params: r.Header.Params, Seed: r.Header.Seed,
			Verdict: sum.Verdict, Summary: sum, Participants: scenario.Scores(r.Header, evs)}
		for j := range evs {
			rr.Events = append(rr.Events, json.RawMessage(event.AppendJSON(nil, &evs[j])))
		}
		res.Rounds = append(res.Rounds, rr)
	}
	return res
}

// Markdown is the results as a page: the leaderboard, then each round.
func (r *Results) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# locklab room %s: %d round(s)\n\n## Leaderboard\n\n", r.Room, len(r.Rounds))
	b.WriteString("| # | participant | rounds | done | denied | violations |\n|---|---|---|---|---|---|\n")
	for i, s := range r.Leaderboard {
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %d |\n", i+1, s.Name, s.Rounds, s.Did, s.Denials, s.Violations)
	}
	for _, n := range r.Renames {
		fmt.Fprintf(&b, "\n%s is %s from round %d on.\n", n.From, n.To, n.Before)
	}
	for _, rr := range r.Rounds {
		fmt.Fprintf(&b, "\n## Round %d: %s with %s, retry %s\n\n%s\n\n", rr.N, rr.Scenario, rr.Strategy, rr.Params.Retry, rr.Verdict)
		term := scenario.ScoreTerm(rr.Scenario)
		fmt.Fprintf(&b, "| participant | workers | %s | denied | violations | state |\n|---|---|---|---|---|---|\n", term)
		for _, s := range rr.Participants {
			state := "done"
			if s.Gone {
				state = "disconnected"
			} else if s.Done < s.Workers {
				state = "unfinished"
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s |\n", s.Name, s.Workers, s.Did, s.Denials, s.Violations, state)
		}
		fmt.Fprintf(&b, "\n%d events (in the JSON results).\n", len(rr.Events))
	}
	return b.String()
}

// Write writes the results to PREFIX.md and PREFIX.json, never over a file
// already there.
func (r *Results) Write(prefix string) (md, js string, err error) {
	md, js = prefix+".md", prefix+".json"
	body, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return "", "", err
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{md, []byte(r.Markdown())}, {js, append(body, '\n')}} {
		fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return "", "", fmt.Errorf("cannot write the results: %w", err)
		}
		_, err = fh.Write(f.data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", "", fmt.Errorf("cannot write the results to %s: %w", f.path, err)
		}
	}
	return md, js, nil
}
