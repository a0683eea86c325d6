package draw

import (
	mrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
)

// TestCellWidthIsStringWidth: the fast width agrees with ansi.StringWidth
// on random lines of glyphs, escapes, letters, wide and joining runes.
func TestCellWidthIsStringWidth(t *testing.T) {
	t.Parallel()
	parts := []string{"a", "Z", " ", "─", "│", "╭", "…", "µs", "→", "✓", "✗", "█", "░", "▕", "▏", "∞",
		"\x1b[38;5;203m", "\x1b[0m", "\x1b[1m", "\x1b]8;;http://x\x1b\\", "日本", "👍", "👍🏽", "e\u0301", "\u200d",
		"❤\ufe0f", "🇩", "🇪", "\u1100", "\u1161", "क", "\u094d", "ि", "\u0600", "\t", "\x1b", "\xff", "한"}
	for _, g := range themes.Table {
		parts = append(parts, string(g.Rune))
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 20_000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		if got, want := cellWidth(s), ansi.StringWidth(s); got != want {
			t.Fatalf("%q: width %d, want %d", s, got, want)
		}
	}
}
