package tui

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// TestViewsShareOneFold: however many views draw a round — the host's
// and a participant's per SSH client — the round's log is folded once a
// frame and its scoreboard worked out once, for them all; each view still
// marks its own lanes.
func TestViewsShareOneFold(t *testing.T) {
	t.Parallel()
	lanes := append(laneNames("alice", 3), laneNames("bob", 3)...)
	stage := NewStage("test", "")
	stage.SetRound(hostedRound(t, lanes))
	now := time.Unix(1000, 0)
	host := NewHostView(stage, openWorkshop{}, themes.Mono(), 120, 40)
	parts := make([]*ParticipantView, 0, 24)
	for i := range cap(parts) {
		name := []string{"alice", "bob"}[i%2]
		parts = append(parts, NewParticipantView(stage, &Participation{Name: name, Fire: make(chan struct{}, 1), Said: &Said{}, Done: make(chan struct{})},
			themes.Mono(), 80+i, 24+i))
	}
	host.Update(frameMsg(now))
	host.View()
	for _, p := range parts {
		p.Update(frameMsg(now))
		if s := p.View(); !containsMarked(s, p.p.Name) {
			t.Fatalf("%s's view does not mark their lanes:\n%s", p.p.Name, s)
		}
	}
	f := stage.fold
	if f == nil || f.tl.N == 0 {
		t.Fatal("no shared fold of the round, or an empty one")
	}
	if f.catches != 1 || f.scorings != 1 {
		t.Errorf("%d views drew one frame: the log was folded %d time(s) and the scoreboard worked out %d time(s), want once each",
			len(parts)+1, f.catches, f.scorings)
	}
	for _, p := range parts {
		if p.host.run.tl != f.tl {
			t.Fatalf("%s's view folds a timeline of its own", p.p.Name)
		}
	}
}

func containsMarked(screen, name string) bool {
	return strings.Contains(ansi.Strip(screen), ownMark+name+"/1")
}

// TestSharedScoresAreTheFolds: the scoreboard the views share, worked out
// from the tally at a playhead, is the one scenario.Scores folds from the
// log's events up to it, at every playhead of a raced round (buys,
// violations, and a participant who disconnected half-way).
func TestSharedScoresAreTheFolds(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{PoolSize: 16, Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers = 6
	raced, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := raced.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := raced.Log.Events()
	h := raced.Header
	h.Lanes = append(append(laneNames("alice", 2), laneNames("bob", 2)...), laneNames("carol", 2)...)
	log := event.NewLog(nil, nil)
	for i, e := range evs {
		if i == len(evs)/2 {
			log.Append(event.Event{Kind: event.KindCrash, Worker: 3, T: e.T, Msg: "bob disconnected"})
		}
		log.Append(e)
	}
	r := &scenario.Run{Header: h, Log: log}
	f := newRoundFold(r, 1, false)
	f.catch(time.Unix(0, 0), true)
	all := log.Events()
	if f.tl.N != len(all) {
		t.Fatalf("folded %d of %d events", f.tl.N, len(all))
	}
	last := f.scoresAt(len(all) - 1)
	if last[0].Did+last[1].Did+last[2].Did == 0 || !last[1].Gone || last[0].Gone {
		t.Fatalf("the round's end: %+v", last)
	}
	for k := -1; k < len(all); k++ {
		want := scenario.Scores(h, all[:k+1])
		if got := f.scoresAt(k); !reflect.DeepEqual(got, want) {
			t.Fatalf("at event %d: shared %+v, folded %+v", k, got, want)
		}
	}
}
