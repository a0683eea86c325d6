package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/themes"
)

// glyphTable is the README's glyph legend, from the glyph table.
func glyphTable() string {
	places := []struct {
		p    themes.Place
		name string
	}{{themes.InLanes, "lanes"}, {themes.InLocks, "locks"}, {themes.InAxis, "time axis"}, {themes.InNodes, "nodes"}}
	var b strings.Builder
	b.WriteString("| glyph | means | where |\n|---|---|---|\n")
	for s := range themes.SymbolCount {
		g := themes.Table[s]
		var where []string
		for _, p := range places {
			if g.Places&p.p != 0 {
				where = append(where, p.name)
			}
		}
		fmt.Fprintf(&b, "| `%c` | %s | %s |\n", g.Rune, g.Meaning, strings.Join(where, ", "))
	}
	return b.String()
}

// TestReadmeGlyphLegend: the README's legend is the glyph table's
// (go test ./tui -update rewrites it between its markers).
func TestReadmeGlyphLegend(t *testing.T) {
	t.Parallel()
	const begin, end = "<!-- glyphs: begin -->\n", "<!-- glyphs: end -->"
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skip("no README beside the module")
	}
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatal("README.md has no glyph legend markers")
	}
	want := glyphTable()
	if s[i+len(begin):j] == want {
		return
	}
	if updating() {
		if err := os.WriteFile("../README.md", []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's glyph legend is not the glyph table's (go test ./tui -update rewrites it):\n%s", want)
}
