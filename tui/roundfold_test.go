package tui

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
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
		if tl := p.host.run.tl; tl == f.tl || tl.Tallies != f.tl.Tallies || &tl.Workers[0] != &f.tl.Workers[0] {
			t.Fatalf("%s's view folds a timeline of its own, or draws its lane names on the fold's", p.p.Name)
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

// TestHostFrameDoesNotWaitForAView: while a view reads the round's fold
// (a participant's draw, held up on a busy machine), the host's frame
// still updates and draws. It folds nothing then, and the round reads as
// DONE only once a later frame has folded its last events.
func TestHostFrameDoesNotWaitForAView(t *testing.T) {
	t.Parallel()
	stage := NewStage("test", "")
	run := hostedRound(t, append(laneNames("alice", 3), laneNames("bob", 3)...))
	stage.SetRound(run)
	host := NewHostView(stage, openWorkshop{}, themes.Mono(), 120, 40)
	now := time.Unix(1000, 0)
	give := stage.hold() // a view, mid-draw
	drew := make(chan string, 1)
	go func() {
		host.Update(frameMsg(now))
		drew <- host.View()
	}()
	var screen string
	select {
	case screen = <-drew:
	case <-time.After(10 * time.Second):
		give()
		<-drew
		t.Fatal("the host's frame waited for a view's draw")
	}
	give()
	if n := host.run.tl.N; n != 0 || strings.Contains(ansi.Strip(screen), "DONE") {
		t.Fatalf("with a view reading the fold, the host's frame folded %d events or said DONE:\n%s", n, ansi.Strip(screen))
	}
	host.Update(frameMsg(now.Add(foldEvery)))
	screen = ansi.Strip(host.View())
	if n := host.run.tl.N; n != run.Log.Len() || !strings.Contains(screen, "DONE") {
		t.Fatalf("the next frame folded %d of %d events, or did not say DONE:\n%s", n, run.Log.Len(), screen)
	}
}

// TestRoomViewsReadTheFoldAtOnce: the host's view and participants'
// views update and draw at once, each in its own goroutine as over SSH,
// while the round's log grows; each folds when it can and reads the one
// fold under its own lane names (go test -race). At the end the fold has
// every event, and every view marks its own lanes.
func TestRoomViewsReadTheFoldAtOnce(t *testing.T) {
	t.Parallel()
	raced := hostedRound(t, append(laneNames("alice", 3), laneNames("bob", 3)...))
	evs := raced.Log.Events()
	log := event.NewLog(nil, nil)
	stage := NewStage("test", "")
	stage.SetRound(&scenario.Run{Header: raced.Header, Log: log})
	views := []interface {
		Update(tea.Msg) (tea.Model, tea.Cmd)
		View() string
	}{NewHostView(stage, openWorkshop{}, themes.Mono(), 120, 40)}
	for i := range 6 {
		views = append(views, NewParticipantView(stage, &Participation{Name: []string{"alice", "bob"}[i%2], Fire: make(chan struct{}, 1),
			Said: &Said{}, Done: make(chan struct{})}, themes.Mono(), 80+10*(i%2), 24+16*(i%2)))
	}
	start := time.Unix(1000, 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, e := range evs {
			log.Append(e)
		}
	}()
	for i, v := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range 30 {
				v.Update(frameMsg(start.Add(time.Duration(f*len(views)+i) * foldEvery / 3)))
				if v.View() == "" {
					t.Error("an empty frame")
					return
				}
			}
		}()
	}
	wg.Wait()
	end := start.Add(time.Hour)
	for _, v := range views {
		v.Update(frameMsg(end))
	}
	if f := stage.fold; f.tl.N != len(evs) {
		t.Fatalf("the fold has %d of %d events", f.tl.N, len(evs))
	}
	for _, v := range views[1:] {
		p := v.(*ParticipantView)
		if s := p.View(); !containsMarked(s, p.p.Name) {
			t.Fatalf("%s's view does not mark their lanes:\n%s", p.p.Name, ansi.Strip(s))
		}
	}
}
