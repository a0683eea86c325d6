package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// hostedRound is a finished round hosted here on the embedded store, with
// lanes named after participants whose workers never reported: every lane
// is idle, so any two would fold together unless told apart.
func hostedRound(t *testing.T, lanes []string) *scenario.Run {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	def, _ := scenario.Lookup("oversell")
	r, err := scenario.StartHosted(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: def.Defaults, Seed: 1},
		lanes, func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	return r
}

func laneNames(who string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s/%d", who, i+1))
	}
	return out
}

// openWorkshop is a room that never opens a round: the host's view only
// needs to know it is the host's.
type openWorkshop struct{}

func (openWorkshop) Lobby(context.Context) ([]Attendee, error) { return nil, nil }
func (openWorkshop) Open(context.Context) (*scenario.Run, error) {
	return nil, fmt.Errorf("no round in this test")
}

func hostViewOf(t *testing.T, ws Workshop, lanes []string, w, h int) *HostView {
	t.Helper()
	stage := NewStage("test", "locklab join")
	stage.SetRound(hostedRound(t, lanes))
	v := NewHostView(stage, ws, themes.Mono(), w, h)
	v.Update(frameMsg(time.Now()))
	return v
}

// TestHostHelpListsKeysThatWork: the host's help names enter for a new
// round and no key of a run of one's own (esc, n, r), which do nothing
// here or something else.
func TestHostHelpListsKeysThatWork(t *testing.T) {
	t.Parallel()
	v := hostViewOf(t, openWorkshop{}, laneNames("alice", 2), 120, 36)
	v.Update(keyRunes("?"))
	help := ansi.Strip(v.View())
	if !strings.Contains(help, "enter new round") {
		t.Errorf("the help does not say how to open a round:\n%s", help)
	}
	for _, lie := range []string{"new seed", "esc", "rerun", "parameters"} {
		if strings.Contains(help, lie) {
			t.Errorf("the host's help lists %q, which does not work here:\n%s", lie, help)
		}
	}
}

// TestHostLanesNeverMixParticipants: at 80×24, where 21 lanes fold, every
// participant keeps rows of their own: a row labelled alice's never stands
// for bob's workers.
func TestHostLanesNeverMixParticipants(t *testing.T) {
	t.Parallel()
	lanes := append(append(laneNames("alice", 8), laneNames("bob", 8)...), laneNames("carol", 5)...)
	v := hostViewOf(t, nil, lanes, 80, 24)
	screen := ansi.Strip(v.View())
	for _, who := range []string{"bob/", "carol/"} {
		if !strings.Contains(screen, who) {
			t.Errorf("no row of %s's at 80×24: folded into another's\n%s", who, screen)
		}
	}
}

// TestHostSizeMessageFits: a window smaller than the view says so in one
// line that fits it.
func TestHostSizeMessageFits(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{79, 23}, {40, 12}, {20, 10}, {12, 3}, {1, 1}} {
		v := hostViewOf(t, nil, laneNames("alice", 2), sz[0], sz[1])
		lines := strings.Split(v.View(), "\n")
		if len(lines) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > sz[0] || strings.Contains(l, "…") && sz[0] > 5 {
				t.Errorf("%dx%d: %q does not fit", sz[0], sz[1], ansi.Strip(l))
			}
		}
	}
}

// TestParticipantSeesOwnLanes: at 80×24, where the room's lanes do not
// all fit, a participant's own lanes are in view and marked, and their
// line and keys are at the bottom.
func TestParticipantSeesOwnLanes(t *testing.T) {
	t.Parallel()
	lanes := append(append(laneNames("alice", 8), laneNames("bob", 8)...), laneNames("carol", 5)...)
	stage := NewStage("test", "")
	stage.SetRound(hostedRound(t, lanes))
	said := &Said{}
	fmt.Fprintln(said, "round 1: fire your 3 worker(s) now")
	fire := make(chan struct{}, 1)
	v := NewParticipantView(stage, &Participation{Name: "carol", Fire: fire, Said: said, Done: make(chan struct{})}, themes.Mono(), 80, 24)
	v.Update(frameMsg(time.Now()))
	screen := ansi.Strip(v.View())
	lines := strings.Split(screen, "\n")
	if len(lines) != 24 || !strings.Contains(screen, ownMark+"carol/1") {
		t.Fatalf("%d lines, carol's lanes not in view:\n%s", len(lines), screen)
	}
	if !strings.Contains(lines[23], "space fire your workers") || !strings.Contains(lines[22], "carol · round 1") {
		t.Errorf("the participant's lines:\n%s", strings.Join(lines[20:], "\n"))
	}
	for range 100 {
		v.Update(keyRunes(" "))
	}
	if len(fire) != 1 {
		t.Error("space did not fire")
	}
}

// TestHostQuitAsks: the host's q, once a round has been raced, asks first
// (any other key goes on); y quits. A viewer's q just leaves.
func TestHostQuitAsks(t *testing.T) {
	t.Parallel()
	v := hostViewOf(t, openWorkshop{}, laneNames("alice", 2), 120, 36)
	if _, cmd := v.Update(keyRunes("q")); cmd != nil {
		t.Fatal("q quit without asking")
	}
	if !strings.Contains(ansi.Strip(v.View()), "end the room? y prints and writes the results") {
		t.Fatalf("q did not ask:\n%s", ansi.Strip(v.View()))
	}
	if _, cmd := v.Update(keyRunes("x")); cmd != nil || strings.Contains(ansi.Strip(v.View()), "end the room?") {
		t.Fatal("another key did not go on")
	}
	v.Update(keyRunes("q"))
	if _, cmd := v.Update(keyRunes("y")); cmd == nil {
		t.Fatal("y did not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("y did not quit")
	}
	viewer := hostViewOf(t, nil, laneNames("alice", 2), 120, 36)
	if _, cmd := viewer.Update(keyRunes("q")); cmd == nil {
		t.Fatal("a viewer's q did not leave")
	}
}

// TestCountdownAndNextRound: everyone's screen counts down to a round's
// start and says what the next round races.
func TestCountdownAndNextRound(t *testing.T) {
	t.Parallel()
	v := hostViewOf(t, nil, laneNames("alice", 2), 120, 36)
	v.stage.SetStart(time.Now().Add(time.Minute))
	v.stage.SetNext("next round: oversell with safe · retry none · stock 3")
	screen := ansi.Strip(v.View())
	if !strings.Contains(screen, "round 1 starts in ") || !strings.Contains(screen, "next round: oversell with safe") {
		t.Errorf("no countdown or next round:\n%s", screen)
	}
	v.stage.SetStart(time.Now().Add(-time.Second))
	if strings.Contains(ansi.Strip(v.View()), "starts in") {
		t.Error("a countdown after the start")
	}
}
