package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// presentLive starts scenario name with strategy in presenter mode at
// 100×30, as `locklab --present` does.
func presentLive(t *testing.T, name, strategy string, speed float64) (*App, *teatest.TestModel, *terminal) {
	t.Helper()
	sc, _ := scenario.Lookup(name)
	p := sc.Defaults
	app := New(Options{Theme: themes.Mono(), Scenario: name, Strategy: strategy, Params: &p, Seed: 1, SeedSet: true,
		Start: true, Present: true, Speed: speed, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30))
	return app, tm, &terminal{tm: tm}
}

func has(words ...string) func([]byte) bool {
	return func(b []byte) bool {
		for _, w := range words {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}
}

func quitTalk(t *testing.T, tm *teatest.TestModel) *App {
	t.Helper()
	tm.Send(keyRunes("q"))
	tm.Send(keyRunes("q"))
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*App)
}

func TestPresentRetryBeatTwoShowsTheHistogram(t *testing.T) {
	t.Parallel()
	_, tm, scr := presentLive(t, "retry", "fixed", 1)
	scr.waitFor(t, "beat 1", has("beat 1 of 3", "backs off", "PAUSED"))
	mark := len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	scr.waitFor(t, "beat 2 with the histogram", since(mark, has("beat 2 of 3", "The herd comes back", "retry delays", "retries, mean", "100–200ms")))
	quitTalk(t, tm)
}

func TestPresentDeadlockShowsTheRingAtItsCycle(t *testing.T) {
	t.Parallel()
	_, tm, scr := presentLive(t, "deadlock", "safe", 1)
	scr.waitFor(t, "the cycle beat with the ring", has("beat 1 of 3", "A wait-for cycle closed", "─ wait-for ", "┌▶", "DEADLOCK: 2 workers wait in a circle"))
	quitTalk(t, tm)
}

// TestPresentRemoteKeysKeepTheTalk: Esc, F5 and Shift+F5 (F17) — what a
// remote's start/stop button sends — leave the talk on screen; b or .
// blanks it and any key brings it back; q asks once.
func TestPresentRemoteKeysKeepTheTalk(t *testing.T) {
	t.Parallel()
	_, tm, scr := presentLive(t, "ttl-expiry", "safe", 1)
	scr.waitFor(t, "beat 1", has("beat 1 of 4", "PAUSED"))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.Send(tea.KeyMsg{Type: tea.KeyF5})
	tm.Send(tea.KeyMsg{Type: tea.KeyF17})
	mark := len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyRight})
	scr.waitFor(t, "beat 2 after esc, f5, shift+f5", since(mark, has("beat 2 of 4")))

	mark = len(scr.all)
	tm.Send(keyRunes("b"))
	scr.waitFor(t, "a blank screen", since(mark, func(b []byte) bool {
		return bytes.Contains(b, []byte("\x1b[")) && !bytes.Contains(b, []byte("beat")) && !bytes.Contains(b, []byte("swimlanes"))
	}))
	mark = len(scr.all)
	tm.Send(keyRunes("x"))
	scr.waitFor(t, "the talk back", since(mark, has("beat 2 of 4", "swimlanes")))

	// A clicker's black-screen button held sends "." again and again:
	// dark; once let go, a "." brings the talk back at the same beat.
	// Held is dots closer together than dotRepeat as the view reads them;
	// under the race detector the view can read them further apart.
	if !raceEnabled {
		heldDots(t, tm, scr)
	}

	mark = len(scr.all)
	tm.Send(keyRunes("q"))
	scr.waitFor(t, "asked once", since(mark, has("q again to quit")))
	tm.Send(keyRunes("x")) // not quitting after all
	a := quitTalk(t, tm)
	if a.screen != screenRun || a.run == nil || !a.run.pr.on {
		t.Fatalf("the talk was left: screen %d", a.screen)
	}
}

// heldDots: "." held blanks the screen; once let go, a "." brings the talk
// back at the same beat.
func heldDots(t *testing.T, tm *teatest.TestModel, scr *terminal) {
	t.Helper()
	mark := len(scr.all)
	for range 4 {
		tm.Send(keyRunes("."))
	}
	scr.waitFor(t, "a blank screen after . held", since(mark, func(b []byte) bool {
		return bytes.Contains(b, []byte("\x1b[")) && !bytes.Contains(b, []byte("beat")) && !bytes.Contains(b, []byte("swimlanes"))
	}))
	time.Sleep(dotRepeat) // let go
	mark = len(scr.all)
	tm.Send(keyRunes("."))
	scr.waitFor(t, "the talk back after .", since(mark, has("beat 2 of 4", "swimlanes")))
}

// TestPresentBlankIsDark: b, and . held (a remote's black-screen button),
// blank the screen; any key brings back the same beat — . too, once the
// held button has stopped repeating.
func TestPresentBlankIsDark(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"b", ". held"} {
		a := New(Options{Theme: themes.Mono(), Replay: loadTestdata(t, "ttl-expiry-safe.jsonl"), Name: "ttl", Present: true})
		clock := time.Unix(1000, 0)
		a.now = func() time.Time { return clock }
		a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		a.Update(frameMsg(time.Unix(0, 0)))
		darken := func() {
			if k == "b" {
				a.Update(keyRunes("b"))
				return
			}
			for range 4 { // held: the first, then the terminal's repeats
				a.Update(keyRunes("."))
				clock = clock.Add(30 * time.Millisecond)
			}
		}
		darken()
		if s := strings.TrimSpace(ansi.Strip(a.View())); s != "" {
			t.Fatalf("%s left %q on screen", k, s)
		}
		for _, back := range []tea.KeyMsg{{Type: tea.KeyEsc}, keyRunes(".")} {
			clock = clock.Add(time.Second) // the button let go
			a.Update(back)
			if s := ansi.Strip(a.View()); !strings.Contains(s, "beat 0 of 4") || a.screen != screenRun {
				t.Fatalf("%s after %s did not bring the talk back at its beat:\n%s", back, k, s)
			}
			darken()
		}
	}
}

// TestPresentDotTappedGoesOn: a "." not followed by another goes on as →
// does; the held button's repeats keep a dark screen dark.
func TestPresentDotTappedGoesOn(t *testing.T) {
	t.Parallel()
	a := New(Options{Theme: themes.Mono(), Replay: loadTestdata(t, "ttl-expiry-safe.jsonl"), Name: "ttl", Present: true})
	clock := time.Unix(1000, 0)
	a.now = func() time.Time { return clock }
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	a.Update(frameMsg(time.Unix(0, 0)))
	_, cmd := a.Update(keyRunes("."))
	if cmd == nil {
		t.Fatal("a tapped . asked for nothing")
	}
	if s := ansi.Strip(a.View()); !strings.Contains(s, "beat 0 of 4") {
		t.Fatalf(". went on before it was known for a tap:\n%s", s)
	}
	a.Update(cmd())      // no second "." came
	for i := range 600 { // a minute of frames plays on to the next beat
		if strings.Contains(ansi.Strip(a.View()), "beat 1 of 4") {
			break
		}
		a.Update(frameMsg(time.Unix(0, 0).Add(time.Duration(i) * 100 * time.Millisecond)))
	}
	if s := ansi.Strip(a.View()); !strings.Contains(s, "beat 1 of 4") {
		t.Fatalf("a tapped . did not go on to beat 1:\n%s", s)
	}
	// Held: dark, and the repeats that follow do not bring it back.
	clock = clock.Add(2 * time.Second)
	_, first := a.Update(keyRunes("."))
	for range 5 {
		clock = clock.Add(30 * time.Millisecond)
		a.Update(keyRunes("."))
	}
	a.Update(first()) // the first press's wait ends: it was no tap
	if s := strings.TrimSpace(ansi.Strip(a.View())); s != "" {
		t.Fatalf(". held left %q on screen", s)
	}
	clock = clock.Add(time.Second)
	a.Update(keyRunes("."))
	if s := ansi.Strip(a.View()); !strings.Contains(s, "beat 1 of 4") {
		t.Fatalf("after . held, a . brought back another beat:\n%s", s)
	}
	// Repeats read together arrive as one message: held too.
	clock = clock.Add(2 * time.Second)
	a.Update(keyRunes("...."))
	if s := strings.TrimSpace(ansi.Strip(a.View())); s != "" {
		t.Fatalf("\"....\" left %q on screen", s)
	}
}
