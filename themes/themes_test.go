package themes_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
	"github.com/muesli/termenv"
)

func TestGlyphsAreDistinct(t *testing.T) {
	seen := map[rune]string{}
	for s := themes.Symbol(0); s < themes.SymbolCount; s++ {
		g := themes.Table[s]
		if g.Rune == 0 || g.Meaning == "" || g.Places == 0 {
			t.Fatalf("symbol %d has no glyph, meaning or place", s)
		}
		if other, dup := seen[g.Rune]; dup {
			t.Fatalf("%q and %q share the glyph %q: one glyph, one meaning", g.Meaning, other, g.Rune)
		}
		seen[g.Rune] = g.Meaning
	}
	for s := themes.State(0); s < themes.StateCount; s++ {
		if themes.Glyphs[s] != themes.Table[s].Rune {
			t.Fatalf("state %v's glyph is not the table's", s)
		}
	}
}

func TestCycleVisitsEveryTheme(t *testing.T) {
	th := themes.Dark()
	var names []string
	for range themes.Names {
		names = append(names, th.Name)
		th = themes.Next(th)
	}
	if strings.Join(names, ",") != strings.Join(themes.Names, ",") || th.Name != "dark" {
		t.Fatalf("cycle: %v then %s", names, th.Name)
	}
	if _, err := themes.ByName("plaid"); err == nil {
		t.Fatal("unknown theme accepted")
	}
}

func TestMonoHasNoColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	m := themes.Mono()
	for s := themes.State(0); s < themes.StateCount; s++ {
		if out := m.Cell(s, 3); strings.Contains(out, "38;") || strings.Contains(out, "48;") {
			t.Fatalf("mono %v has a colour: %q", s, out)
		}
	}
	if out := themes.Dark().Cell(themes.Critical, 1); !strings.Contains(out, "38;") {
		t.Fatalf("dark critical has no colour: %q", out)
	}
}
