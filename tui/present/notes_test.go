package present

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
)

// The notes view shows the beat's notes, what comes next and a clock;
// before a talk is on, that it waits for one.
func TestNotesView(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 14, 5, 0, 0, time.UTC)
	m := &notesView{th: themes.Mono(), file: "talks/t.yaml", clock: func() time.Time { return now }}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if v := m.View(); !strings.Contains(v, "waiting for the talk (locklab talk talks/t.yaml)") || !strings.Contains(v, "14:05:00") {
		t.Fatalf("before the talk:\n%s", v)
	}
	m.Update(notesAttachedMsg(true))
	m.Update(notesPosMsg(talk.Position{Talk: "T", Scene: 2, Scenes: 3, Title: "Scene two", Beat: 1, Beats: 4,
		Caption: "w00 holds the lock.", Notes: "Point at the lock lane.", Next: "beat 2 (taken)", Started: now.Add(-90 * time.Second)}))
	v := m.View()
	for _, want := range []string{"scene 2 of 3 · beat 1 of 4", "14:05:00 · 01:30 in", "w00 holds the lock.", "Point at the lock lane.", "NEXT", "beat 2 (taken)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the notes lack %q:\n%s", want, v)
		}
	}
}
