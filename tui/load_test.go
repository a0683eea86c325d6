package tui

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// A replay opens while its log is still being read: it shows what was
// read, says that more is coming, and claims no verdict until the whole
// log is read; then the verdict is the checker's over all of it.
func TestReplayShowsNoVerdictWhileLoading(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/ttl-expiry-safe.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() { // the header, then half the events, as a slow disk gives them
		w := bufio.NewWriter(pw)
		w.WriteString(lines[0])
		w.Flush()
	}()
	ld, err := scenario.StreamLog(pr)
	if err != nil {
		t.Fatal(err)
	}
	half := len(lines) / 2
	for _, l := range lines[1:half] {
		io.WriteString(pw, l)
	}
	app := New(Options{Theme: themes.Mono(), Loading: ld, Name: "ttl.jsonl"})
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	for range 3 {
		app.Update(frameMsg(time.Now()))
		app.Update(tea.KeyMsg{Type: tea.KeyEnd})
		app.Update(frameMsg(time.Now()))
		view := app.View()
		for _, claim := range []string{"UNSAFE", "CORRECT", "OVERSOLD", "END"} {
			if strings.Contains(view, claim) {
				t.Fatalf("%q on screen while the log is read:\n%s", claim, view)
			}
		}
		if !strings.Contains(view, "reading the log…") {
			t.Fatalf("nothing says the log is still being read:\n%s", view)
		}
	}
	for _, l := range lines[half:] {
		io.WriteString(pw, l)
	}
	pw.Close()
	<-ld.Done()
	app.Update(frameMsg(time.Now()))
	app.Update(tea.KeyMsg{Type: tea.KeyEnd})
	app.Update(frameMsg(time.Now()))
	want := ld.Summary().Verdict
	if view := app.View(); !strings.Contains(view, want[:strings.Index(want, " ")]) || strings.Contains(view, "reading the log…") {
		t.Fatalf("once read, the verdict %q is not shown:\n%s", want, view)
	}
	if app.run.s.summary == nil || app.run.s.summary.Verdict != want {
		t.Fatalf("the view's verdict is not the checker's over the whole log")
	}
}

// A log cut off mid-event says so on the screen of an 80×24 terminal, with
// what it shows and that there is no verdict, not only after the view ends.
func TestTruncatedReplaySaysSoOnScreen(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/ttl-expiry-safe.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cut := string(data[:len(data)*2/3])
	cut = cut[:strings.LastIndexByte(cut, '\n')+10] // ten bytes into the next event
	ld, err := scenario.StreamLog(strings.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	<-ld.Done()
	app := New(Options{Theme: themes.Mono(), Loading: ld, Name: "cut.jsonl"})
	app.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	app.Update(frameMsg(time.Now()))
	app.Update(frameMsg(time.Now()))
	view := app.View()
	if !strings.Contains(view, "events shown, no verdict") || !strings.Contains(view, "cut.jsonl: line") {
		t.Fatalf("the screen does not say the log was cut short:\n%s", view)
	}
	for _, claim := range []string{"UNSAFE", "CORRECT", "END"} {
		if strings.Contains(view, claim) {
			t.Fatalf("%q on screen for a log cut short:\n%s", claim, view)
		}
	}
}
