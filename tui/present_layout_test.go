package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// panelWords are the words by which a caption names a panel.
var panelWords = map[panel]*regexp.Regexp{
	panelStock:   regexp.MustCompile(`(^|[^:\w])stock\b`), // the counter, not lock:stock
	panelRetries: regexp.MustCompile(`(?i)histogram|retry[- ]delay`),
	panelWaits:   regexp.MustCompile(`(?i)wait-for|cycle|\bring\b|in a circle`),
	panelNodes:   regexp.MustCompile(`(?i)\bnodes?\b`),
	panelCredits: regexp.MustCompile(`(?i)\bcredit`),
	panelJob:     regexp.MustCompile(`(?i)\bjob\b|\bqueue\b`),
}

// named is the panels caption names.
func named(caption string) []panel {
	var ps []panel
	for p, re := range panelWords {
		if re.MatchString(caption) {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestEveryCaptionsPanelIsInItsLayout checks every scenario's captions,
// with every strategy it runs (and every lock order), against the panels
// its presenter layout shows.
func TestEveryCaptionsPanelIsInItsLayout(t *testing.T) {
	t.Parallel()
	for _, sc := range scenario.Catalogue() {
		if _, ok := presentPanels[sc.Name]; !ok {
			t.Errorf("%s declares no presenter panels", sc.Name)
		}
		layout := presentLayout(sc.Name, false)
		variants := []event.Params{sc.Defaults}
		if sc.Name == "deadlock" {
			for _, o := range event.Orders {
				p := sc.Defaults
				p.Order = o
				variants = append(variants, p)
			}
		}
		for _, strategy := range sc.Strategies {
			for _, p := range variants {
				for _, c := range sc.Captions(strategy, p) {
					for _, want := range named(c) {
						if !hasPanel(layout, want) {
							t.Errorf("%s/%s: %q names the %s panel; the presenter layout %v lacks it", sc.Name, strategy, c, panelTitles[want], layout)
						}
					}
				}
			}
		}
	}
}

// TestRecordedCaptionsFindTheirPanelsOnScreen plays recorded runs in
// presenter mode at 100×30 and checks, at every beat, that each panel its
// caption (and any note under it) names is on screen.
func TestRecordedCaptionsFindTheirPanelsOnScreen(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"crash.jsonl", "naive-flaws-naive.jsonl", "oversell-none-beats.jsonl", "redlock.jsonl",
		"retry-fixed.jsonl", "ttl-expiry-safe.jsonl", "ttl-fenced.jsonl"} {
		t.Run(name, func(t *testing.T) {
			a := New(Options{Theme: themes.Mono(), Replay: loadTestdata(t, name), Name: name, Present: true})
			a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
			v := a.run
			stops := 0
			for _, seq := range v.pr.beats() {
				v.pr.stopAt(seq)
				st := a.Presenter()
				screen := ansi.Strip(a.View())
				text := st.Caption + " " + v.pr.noteAfter(v.cursor)
				for _, p := range named(text) {
					if !strings.Contains(screen, "─ "+panelTitles[p]+" ") {
						t.Errorf("beat %d of %d %q names the %s panel; it is not on screen:\n%s", st.Index, st.Total, st.Caption, panelTitles[p], screen)
					}
				}
				stops++
			}
			if stops == 0 {
				t.Fatal("no beat to stop at")
			}
		})
	}
}
