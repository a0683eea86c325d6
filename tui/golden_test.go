package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
	"github.com/muesli/termenv"
)

// updating reports -update (the flag is teatest's golden package's, so
// go test ./tui -update rewrites every golden file).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// loadView opens a recorded log as a replay view.
func loadView(t testing.TB, name string) *runView {
	t.Helper()
	v := newRunView(replaySession(name, loadTestdata(t, name)), 1)
	v.status = ""
	return v
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

var sizes = [][2]int{{80, 24}, {160, 48}}

func TestGoldenOversellNoneAtTheEnd(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "oversell-none.jsonl")
		v.toLive() // the end of the recording
		got := v.View(themes.Mono(), sz[0], sz[1]-1)
		for _, want := range []string{"OVERSOLD", "sold 12 of 1"} {
			if !contains(got, want) {
				t.Errorf("%dx%d: %q missing", sz[0], sz[1], want)
			}
		}
		golden(t, fmt.Sprintf("oversell-none-%dx%d", sz[0], sz[1]), got)
	}
}

func TestGoldenPausedAtTTLLapse(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "ttl-lapse.jsonl")
		// The first marker is the TTL lapse under w02, still working; the
		// second is the violation it causes: w00 inside with w02.
		if v.tl.Markers[0].Kind != timeline.MarkerExpiry || v.tl.Markers[1].Kind != timeline.MarkerViolation {
			t.Fatal("the recording's first markers are not a TTL lapse then a violation")
		}
		v.marker(1)
		v.marker(1)
		v.status = ""
		got := v.View(themes.Mono(), sz[0], sz[1]-1)
		if !contains(got, string(draw.GlyphLapse)) || !contains(got, "PAUSED") || !contains(got, "1 violation") {
			t.Errorf("%dx%d: no lapse mark or not paused:\n%s", sz[0], sz[1], got)
		}
		golden(t, fmt.Sprintf("ttl-lapse-paused-%dx%d", sz[0], sz[1]), got)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
