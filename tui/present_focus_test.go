package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// lockRef finds the lock keys a caption names ("lock:S").
var lockRef = regexp.MustCompile(`\block:\w+`)

// TestRecordedCaptionsFindTheirActorsOnScreen plays recorded runs in
// presenter mode, where nobody scrolls, at 80×24, 100×30 and 120×36, and
// checks at every beat that the lane of each worker its caption names and
// the lane of each lock it names are on screen (where a locks box fits at
// all) — Redlock's fence part is about w08 and lock S, the last of ten
// workers and five locks.
func TestRecordedCaptionsFindTheirActorsOnScreen(t *testing.T) {
	t.Parallel()
	logs := map[string]*scenario.Loaded{}
	for _, name := range []string{"crash.jsonl", "naive-flaws-naive.jsonl", "oversell-none-beats.jsonl", "redlock.jsonl",
		"retry-fixed.jsonl", "ttl-expiry-safe.jsonl", "ttl-fenced.jsonl"} {
		logs[name] = loadTestdata(t, name)
	}
	// Redlock's five parts today, ten workers, five locks.
	sc, err := scenario.Lookup("redlock")
	if err != nil {
		t.Fatal(err)
	}
	if logs["redlock, 5 parts"], err = runDefault(t, sc); err != nil {
		t.Fatal(err)
	}
	fenced := false
	for name, l := range logs {
		for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 36}} {
			a := New(Options{Theme: themes.Mono(), Replay: l, Name: name, Present: true})
			a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			v := a.run
			for _, seq := range v.pr.beats() {
				v.pr.stopAt(seq)
				st := a.Presenter()
				screen := ansi.Strip(a.View())
				for _, w := range workerRef.FindAllString(st.Caption, -1) {
					if !regexp.MustCompile(`│` + w + `\b`).MatchString(screen) {
						t.Errorf("%s at %dx%d, beat %d %q: %s's lane is not on screen:\n%s", name, size[0], size[1], st.Index, st.Caption, w, screen)
					}
				}
				locks := lockRef.FindAllString(st.Caption, -1)
				if st.ID == "fenced" {
					fenced = true
					locks = append(locks, "lock:S") // what the fence part is played on
				}
				if !strings.Contains(screen, "─ locks ") {
					locks = nil // no room for a locks box at all
				}
				for _, l := range locks {
					if !strings.Contains(screen, l+":") {
						t.Errorf("%s at %dx%d, beat %d %q: %s's lane is not on screen:\n%s", name, size[0], size[1], st.Index, st.Caption, l, screen)
					}
				}
			}
		}
	}
	if !fenced {
		t.Error("no run told Redlock's fence part")
	}
}
