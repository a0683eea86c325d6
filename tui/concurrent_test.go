package tui

import (
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
)

// Views in one process draw at once — a host's screen and its SSH viewers,
// recordings side by side — each in its own theme; what they share (the
// paints of the last theme, the last backdrop) must bear it (go test -race).
func TestViewsDrawAtOnce(t *testing.T) {
	t.Parallel()
	ths := []*themes.Theme{themes.Dark(), themes.HighContrast(), themes.Mono(), themes.Dark()}
	var wg sync.WaitGroup
	for i, th := range ths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := New(Options{Theme: th, Replay: loadTestdata(t, "ttl-expiry-safe.jsonl"), Name: "ttl"})
			a.Update(tea.WindowSizeMsg{Width: 100 + i, Height: 30})
			for f := range 40 {
				a.Update(frameMsg(time.Unix(0, 0).Add(time.Duration(f) * 50 * time.Millisecond)))
				if a.View() == "" {
					t.Error("an empty frame")
					return
				}
			}
		}()
	}
	wg.Wait()
}
