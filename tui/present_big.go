package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	figure "github.com/common-nighthawk/go-figure"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// Big type: a beat's headline and the verdict in block letters, for a room.
const (
	bigW, bigH = 100, 29 // the smallest view (footer excluded) that gets big type
	bigTall    = 40      // from this height, the taller letters
)

// bigFonts are the FIGlet fonts of the headline, the tallest first: both
// are drawn with '#', which becomes a full block.
var bigFonts = []string{"banner", "3x5"}

// bigCache keeps rendered headlines: a font is parsed per rendering, and a
// headline stays on screen for many frames.
type bigCache map[string][]string

// letters is s in block letters at most w cells wide, from the tallest font
// that fits (the short one only when tall is false); nil when none does.
func (c bigCache) letters(s string, w int, tall bool) []string {
	s = strings.ToUpper(asciiOnly(s))
	fonts := bigFonts
	if !tall {
		fonts = fonts[1:]
	}
	for _, f := range fonts {
		key := f + "\x00" + s
		rows, ok := c[key]
		if !ok {
			rows = blockRows(figure.NewFigure(s, f, false).Slicify())
			if len(c) > 64 {
				clear(c)
			}
			c[key] = rows
		}
		if widest(rows) <= w && len(rows) > 0 {
			return rows
		}
	}
	return nil
}

// blockRows drops blank rows and turns '#' into full blocks.
func blockRows(rows []string) []string {
	var out []string
	for _, r := range rows {
		if strings.TrimSpace(r) == "" {
			continue
		}
		out = append(out, strings.ReplaceAll(r, "#", "█"))
	}
	return out
}

func widest(rows []string) int {
	n := 0
	for _, r := range rows {
		n = max(n, ansi.StringWidth(r))
	}
	return n
}

// asciiOnly keeps what a FIGlet font has glyphs for: printable ASCII.
func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return -1
		}
		return r
	}, s)
}

// headline is the big words of the beat on screen: the verdict's first
// words (up to its " — " or its first sentence's end), else the beat's.
func headline(st PresenterState) string {
	if st.ID != scenario.BeatVerdict {
		return scenario.Headline(st.ID)
	}
	h := st.Caption
	for _, cut := range []string{" — ", ". "} {
		if i := strings.Index(h, cut); i >= 0 {
			h = h[:i]
		}
	}
	if len(h) > 24 {
		if i := strings.Index(h, ", "); i >= 0 {
			h = h[:i]
		}
	}
	return strings.TrimSuffix(h, ".")
}

// bigTop is the beat in big type — headline in block letters, the caption
// under it, then which beat and the keys — or nil when the screen is too
// small for it or the headline does not fit.
func (v *runView) bigTop(th *themes.Theme, st PresenterState, title, text, hint string, w, h int) []string {
	if w < bigW || h < bigH || st.Index == 0 || st.ID == "" {
		return nil
	}
	if v.big == nil {
		v.big = bigCache{}
	}
	rows := v.big.letters(headline(st), w-2, h >= bigTall)
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
	pad := strings.Repeat(" ", max((w-widest(rows))/2, 0))
	for _, r := range rows {
		out = append(out, pad+style.Render(r))
	}
	out = append(out, "")
	for _, l := range centreWrap(text, min(w-8, 92), w) {
		out = append(out, th.Title.Render(l))
	}
	foot := title + " · " + hint
	return append(out, strings.Repeat(" ", max((w-ansi.StringWidth(foot))/2, 0))+th.Muted.Render(foot))
}
