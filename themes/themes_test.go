package themes_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
	"github.com/muesli/termenv"
)

func TestGlyphsAreDistinct(t *testing.T) {
	seen := map[rune]themes.State{}
	for s := themes.State(0); s < themes.StateCount; s++ {
		g := themes.Glyphs[s]
		if other, dup := seen[g]; dup {
			t.Fatalf("%v and %v share the glyph %q: mono could not tell them apart", s, other, g)
		}
		seen[g] = s
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
