package draw

import (
	"testing"

	"github.com/locklab/locklab/themes"
)

// TestLooksKeepEachTheme: views drawing at once in different themes (a
// host's screen and its SSH viewers, each pressing t) each find their
// theme's paints built, instead of rebuilding them at every turn.
func TestLooksKeepEachTheme(t *testing.T) {
	dark, mono := themes.Dark(), themes.Mono()
	first := lookOf(dark)
	if lookOf(mono) == first {
		t.Fatal("two themes share one look")
	}
	if lookOf(dark) != first {
		t.Fatal("a theme's look was built anew after another theme drew")
	}
}
