package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/present"
)

// bigTop is the beat in big type — headline in block letters, the caption
// under it, then which beat and the keys — or nil when the screen is too
// small for it or the headline does not fit.
func (p *presenter) bigTop(th *themes.Theme, st PresenterState, title, text, hint string, w, h int) []string {
	if w < present.W || h < present.H || st.Index == 0 || st.ID == "" {
		return nil
	}
	if p.big == nil {
		p.big = bigCache{}
	}
	rows := p.big.letters(present.Headline(st.ID, st.Caption), w-2, h >= present.Tall)
	if rows == nil {
		return nil
	}
	style := th.Title
	if st.ID == scenario.BeatVerdict {
		// The verdict badge's colour, as the letters' own: a badge's
		// background would fill the letters' gaps.
		badge := th.VerdictBad
		if strings.HasPrefix(st.Caption, "CORRECT") {
			badge = th.VerdictGood
		}
		style = lipgloss.NewStyle().Foreground(badge.GetBackground()).Bold(true)
	}
	out := []string{""}
	pad := strings.Repeat(" ", max((w-present.Widest(rows))/2, 0))
	for _, r := range rows {
		out = append(out, pad+style.Render(r))
	}
	out = append(out, "")
	for _, l := range present.CentreWrap(text, min(w-8, 92), w) {
		out = append(out, th.Title.Render(l))
	}
	foot := title + " · " + hint
	return append(out, strings.Repeat(" ", max((w-ansi.StringWidth(foot))/2, 0))+th.Muted.Render(foot))
}

// bigCache keeps headlines in block letters (present.Cache).
type bigCache present.Cache

func (c bigCache) letters(s string, w int, tall bool) []string {
	return present.Cache(c).Letters(s, w, tall)
}
