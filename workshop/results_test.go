package workshop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// TestStrategyBetweenRoundsAndResults: three rounds on one host, the lock
// changed between them without a restart; the leaderboard sums each
// participant's scoreboards; the results keep every round with its
// strategy, per-participant figures and event log, in Markdown and JSON,
// and never overwrite a file.
func TestStrategyBetweenRoundsAndResults(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock = 2
	h, err := OpenHost(ctx, HostConfig{URL: srv.URL, Room: "steer", Scenario: "oversell", Strategy: "none", Params: p, Seed: 1, Lead: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	errs := make(chan error, 2)
	for _, n := range []string{"alice", "bob"} {
		go func() { errs <- Join(ctx, JoinConfig{URL: srv.URL, Room: "steer", Name: n, Workers: 2, Rounds: 3}) }()
	}
	waitLobby(t, h, 2)
	if err := h.SetNext(Next{Scenario: "oversell", Strategy: "no-such-lock", Retry: "none", Stock: 2}); err == nil {
		t.Error("a strategy that cannot be joined was taken")
	}
	var runs []*scenario.Run
	for _, n := range []Next{{"oversell", "none", "none", 2}, {"oversell", "safe", "none", 2}, {"oversell", "safe", "full-jitter", 3}} {
		if err := h.SetNext(n); err != nil {
			t.Fatal(err)
		}
		run, _, err := h.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Wait(); err != nil {
			t.Fatal(err)
		}
		if run.Header.Strategy != n.Strategy || run.Header.Params.Retry != n.Retry || run.Header.Params.Stock != n.Stock {
			t.Fatalf("round raced %s/%s/%d, want %+v", run.Header.Strategy, run.Header.Params.Retry, run.Header.Params.Stock, n)
		}
		runs = append(runs, run)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	board := Leaderboard(runs, nil)
	var sum [3]int
	for _, r := range runs {
		for _, s := range scenario.Scores(r.Header, r.Log.Events()) {
			sum[0], sum[1], sum[2] = sum[0]+s.Did, sum[1]+s.Violations, sum[2]+s.Denials
		}
	}
	var got [3]int
	for _, s := range board {
		if s.Rounds != 3 {
			t.Errorf("%s: %d rounds, want 3", s.Name, s.Rounds)
		}
		got[0], got[1], got[2] = got[0]+s.Did, got[1]+s.Violations, got[2]+s.Denials
	}
	if len(board) != 2 || got != sum {
		t.Fatalf("leaderboard %+v sums to %v, the rounds' scoreboards to %v", board, got, sum)
	}
	if board[0].Did < board[1].Did {
		t.Errorf("leaderboard out of order: %+v", board)
	}
	res := Collect("steer", runs, nil)
	prefix := filepath.Join(t.TempDir(), "room")
	md, js, err := res.Write(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := res.Write(prefix); err == nil {
		t.Error("the results were written over")
	}
	page, _ := os.ReadFile(md)
	for _, want := range []string{"## Round 1: oversell with none, retry none", "## Round 3: oversell with safe, retry full-jitter", "| 1 | " + board[0].Name + " | 3 |"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, page)
		}
	}
	var back struct {
		Rounds []struct {
			Strategy     string            `json:"strategy"`
			Participants []scenario.Score  `json:"participants"`
			Events       []json.RawMessage `json:"events"`
		} `json:"rounds"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i, r := range back.Rounds {
		if r.Strategy != runs[i].Header.Strategy || len(r.Events) != runs[i].Log.Len() || len(r.Participants) != 2 {
			t.Errorf("round %d in the JSON: %s, %d events, %d participants; want %s, %d, 2", i+1, r.Strategy, len(r.Events), len(r.Participants),
				runs[i].Header.Strategy, runs[i].Log.Len())
		}
	}
}

// TestRenamedFollowsTheChangesAfterARound: a participant's rounds before
// a change of name count under the new one, through every later change;
// a name given up and taken by someone else later stays theirs.
func TestRenamedFollowsTheChangesAfterARound(t *testing.T) {
	renames := []Rename{{From: "alice", To: "al", Before: 2}, {From: "al", To: "alix", Before: 3}}
	for _, c := range []struct {
		name string
		n    int
		want string
	}{
		{"alice", 1, "alix"}, // raced as alice in round 1, alix since round 3
		{"al", 2, "alix"},
		{"alix", 3, "alix"},
		{"alice", 2, "alice"}, // a newcomer who took the name after it was given up
		{"bob", 1, "bob"},
	} {
		if got := Renamed(c.name, c.n, renames); got != c.want {
			t.Errorf("%s in round %d: %s, want %s", c.name, c.n, got, c.want)
		}
	}
}
