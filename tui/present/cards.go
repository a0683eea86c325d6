package present

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
)

// Card is scene i's title card: which scene, its title, what runs and
// what to watch for.
func Card(th *themes.Theme, t *talk.Talk, i, w, h int, hint string) string {
	sc := t.Scenes[i]
	what := sc.Scenario + " · " + sc.Strategy
	if sc.Params.Order != "" && sc.Scenario == "deadlock" {
		what += " · " + sc.Params.Order + " order"
	}
	lines := []string{th.Muted.Render(t.Title), "", th.Accent.Render(fmt.Sprintf("scene %d of %d", i+1, len(t.Scenes))), ""}
	for _, l := range strings.Split(ansi.Wordwrap(sc.Title, max(w-12, 20), ""), "\n") {
		lines = append(lines, th.Title.Render(l))
	}
	lines = append(lines, "", th.Text.Render(what))
	if s, err := scenario.Lookup(sc.Scenario); err == nil && s.Watch != "" {
		for _, l := range strings.Split(ansi.Wordwrap("watch "+s.Watch, max(w-16, 20), ""), "\n") {
			lines = append(lines, th.Muted.Render(l))
		}
	}
	if hint != "" {
		lines = append(lines, "", "", th.Muted.Render(hint))
	}
	return Centred(lines, w, h)
}

// EndCard is the card after a talk's last scene.
func EndCard(th *themes.Theme, t *talk.Talk, w, h int) string {
	lines := []string{th.Muted.Render(t.Title), "", th.Title.Render("the end of the talk"), "",
		th.Muted.Render(fmt.Sprintf("%d scenes · ← goes back · q quits", len(t.Scenes)))}
	return Centred(lines, w, h)
}

// Centred places lines in the middle of a w×h screen.
func Centred(lines []string, w, h int) string {
	top := max((h-len(lines))/2, 0)
	out := make([]string, 0, h)
	for range top {
		out = append(out, "")
	}
	for _, l := range lines {
		out = append(out, strings.Repeat(" ", max((w-ansi.StringWidth(l))/2, 0))+l)
	}
	return strings.Join(out, "\n")
}

// CaptionBox is the caption, large: bold, wrapped, centred in a box, with
// a title (which beat) and a hint (what the keys do now).
func CaptionBox(th *themes.Theme, title, text, hint string, w int) []string {
	inner := max(w-8, 20)
	lines := []string{""}
	for _, l := range CentreWrap(text, inner, w-2) {
		lines = append(lines, th.Title.Render(l))
	}
	lines = append(lines, "", strings.Repeat(" ", max((w-2-ansi.StringWidth(hint))/2, 0))+th.Muted.Render(hint))
	return strings.Split(draw.Box(th, title, lines, w, len(lines)+2), "\n")
}

// CentreWrap wraps text at wrap cells and centres each line in w cells.
func CentreWrap(text string, wrap, w int) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wordwrap(text, wrap, ""), "\n") {
		out = append(out, strings.Repeat(" ", max((w-ansi.StringWidth(l))/2, 0))+l)
	}
	return out
}
