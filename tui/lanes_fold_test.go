package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// foldedRun is a finished oversell run of workers on the embedded store,
// folded into a timeline of a served round's capacity (500 lanes, most of
// them for requests that never came); it returns the last event's index
// and time.
func foldedRun(t *testing.T, workers int) (*timeline.Timeline, int, time.Duration) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{PoolSize: 64, Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers = workers
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := r.Log.Events()
	tl := timeline.New(500) // a served round's capacity: 500 requests
	for _, e := range evs {
		tl.Fold(e)
	}
	return tl, len(evs) - 1, evs[len(evs)-1].T
}

// TestServedLanesOnePerRequest: a served round's 30 requests get a lane
// each when the box has the rows — none for the 470 that have not come —
// and when it has fewer, rows fold only as far as needed, labelled with
// the list of their members, never a count that reads as a range.
func TestServedLanesOnePerRequest(t *testing.T) {
	t.Parallel()
	tl, k, end := foldedRun(t, 30)
	tl.Arrivals = true
	rows := strings.Split(ansi.Strip(strings.Join(draw.LanesFocus(themes.Mono(), tl, k, end, end, 100, 10, 40, 0, nil), "\n")), "\n")
	labels := 0
	for _, r := range rows {
		if strings.HasPrefix(r, "w") {
			labels++
			if strings.ContainsAny(strings.Fields(r)[0], ",×+") {
				t.Errorf("a folded row with room for every request: %q", r)
			}
		}
	}
	if labels != 30 {
		t.Errorf("%d lanes for 30 requests in 39 rows:\n%s", labels, strings.Join(rows, "\n"))
	}
	rows = strings.Split(ansi.Strip(strings.Join(draw.LanesFocus(themes.Mono(), tl, k, end, end, 100, 10, 21, 0, nil), "\n")), "\n")
	members := 0
	for _, r := range rows[:20] {
		label := strings.Fields(r)[0]
		if strings.Contains(label, "×") {
			t.Errorf("%q: a count, not the members", label)
		}
		head, more, _ := strings.Cut(label, "+")
		members += len(strings.Split(head, ","))
		if more != "" {
			n := 0
			for _, c := range more {
				n = n*10 + int(c-'0')
			}
			members += n
		}
	}
	if members != 30 {
		t.Errorf("20 rows stand for %d requests, want 30:\n%s", members, strings.Join(rows, "\n"))
	}
}

// TestMembersLabel: a folded row's label lists its lanes, shortened with
// +N for those that do not fit.
func TestMembersLabel(t *testing.T) {
	t.Parallel()
	tl := timeline.New(12)
	for in, want := range map[int]string{9: "w01,w07+1", 11: "w01,w07,w11", 5: "w01+2"} {
		if got := draw.MembersLabel(tl, []int{1, 7, 11}, in); got != want {
			t.Errorf("width %d: %q, want %q", in, got, want)
		}
	}
	tl.Names = laneNames("alice", 12)
	if got := draw.MembersLabel(tl, []int{0, 3, 4}, 14); got != "alice/1,4,5" {
		t.Errorf("named: %q", got)
	}
}
