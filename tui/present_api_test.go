package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
)

// TestPresenterAPI drives a replay from outside, as a talk does: → until
// the last beat, then once more, which hands over to AfterLast.
func TestPresenterAPI(t *testing.T) {
	t.Parallel()
	var heard []PresenterState
	after := 0
	a := New(Options{Theme: themes.Mono(), Replay: loadTestdata(t, "ttl-expiry-safe.jsonl"), Name: "ttl", Present: true,
		Extras:    map[string]BeatExtra{"taken": {Caption: "Look at the lock lane.", Notes: "pause here"}, "1": {Notes: "first"}},
		OnBeat:    func(s PresenterState) { heard = append(heard, s) },
		AfterLast: func() tea.Cmd { after++; return nil },
	})
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	epoch := time.Unix(0, 0)
	at := time.Duration(0)
	frame := func() { at += 100 * time.Millisecond; a.Update(frameMsg(epoch.Add(at))) }
	frame()
	if st := a.Presenter(); st.Index != 0 || st.Total != 4 || st.NextID != "acquired" {
		t.Fatalf("before the first beat: %+v", st)
	}
	var seen []PresenterState
	for i := 0; i < 2000 && after == 0; i++ {
		if st := a.Presenter(); st.Waiting || st.Index == 0 && i == 0 {
			if st.Waiting {
				seen = append(seen, st)
			}
			a.PresentNext()
		}
		frame()
	}
	if after != 1 {
		t.Fatalf("AfterLast called %d times; stops: %+v", after, seen)
	}
	var ids []string
	for _, st := range seen {
		ids = append(ids, st.ID)
		if st.Total != 4 {
			t.Errorf("beat %d says of %d, want of 4", st.Index, st.Total)
		}
	}
	if got := strings.Join(ids, " "); got != "acquired taken stale-write verdict" {
		t.Fatalf("stops %q", got)
	}
	if s := seen[1]; s.Extra != "Look at the lock lane." || s.Notes != "pause here" || s.NextID != "stale-write" {
		t.Errorf("beat 2: %+v", s)
	}
	if seen[0].Notes != "first" || !seen[3].Last || seen[2].Last {
		t.Errorf("beat 1 notes %q, last flags %v %v", seen[0].Notes, seen[2].Last, seen[3].Last)
	}
	if len(heard) == 0 || heard[len(heard)-1].ID != "verdict" {
		t.Fatalf("OnBeat heard %d states", len(heard))
	}
	a.PresentBack()
	if st := a.Presenter(); st.ID != "stale-write" {
		t.Fatalf("back from the verdict: %+v", st)
	}
	a.PresentBack()
	if !strings.Contains(a.View(), "Look at the lock lane.") {
		t.Error("the extra caption is not on screen at its beat")
	}
}
