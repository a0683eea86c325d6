package present

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	figure "github.com/common-nighthawk/go-figure"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// Theme is presenter mode's: it reads from the back of the room.
var Theme = themes.HighContrast()

// Big type: a beat's headline and the verdict in block letters, for a room.
const (
	W, H = 100, 29 // the smallest view (footer excluded) that gets big type
	Tall = 40      // from this height, the taller letters
)

// fonts are the FIGlet fonts of the headline, the tallest first: both
// are drawn with '#', which becomes a full block.
var fonts = []string{"banner", "3x5"}

// Cache keeps rendered headlines: a font is parsed per rendering, and a
// headline stays on screen for many frames.
type Cache map[string][]string

// Letters is s in block letters at most w cells wide, from the tallest font
// that fits (the short one only when tall is false); nil when none does.
func (c Cache) Letters(s string, w int, tall bool) []string {
	s = strings.ToUpper(asciiOnly(s))
	fs := fonts
	if !tall {
		fs = fs[1:]
	}
	for _, f := range fs {
		key := f + "\x00" + s
		rows, ok := c[key]
		if !ok {
			rows = blockRows(figure.NewFigure(s, f, false).Slicify())
			if len(c) > 64 {
				clear(c)
			}
			c[key] = rows
		}
		if Widest(rows) <= w && len(rows) > 0 {
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

// Widest is the widest of rows, in cells.
func Widest(rows []string) int {
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

// Headline is the big words of the beat id said with caption: the
// verdict's first words (up to its " — " or its first sentence's end),
// else the beat's.
func Headline(id, caption string) string {
	if id != scenario.BeatVerdict {
		return scenario.Headline(id)
	}
	h := caption
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
