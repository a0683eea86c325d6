package tui

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// The flagship race, opened with nothing but its name, lasts long enough to
// be watched — and it is still the race: it ends oversold.
func TestOversellOpensAtAWatchablePace(t *testing.T) {
	t.Parallel()
	app := New(Options{Theme: themes.Mono(), Scenario: "oversell", Strategy: "none", Seed: 7, SeedSet: true, Start: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	scr := &terminal{tm: tm}
	scr.waitFor(t, "live", func(b []byte) bool { return bytes.Contains(b, []byte("LIVE")) })
	started := time.Now()
	time.Sleep(3 * time.Second)
	// The virtual clock runs off the wall clock: a busy machine can only
	// make the run last longer, never shorter.
	if out := scr.waitFor(t, "output", func([]byte) bool { return true }); bytes.Contains(out, []byte("DONE")) {
		t.Fatalf("oversell/none was over within %v of real time", time.Since(started))
	}
	scr.waitFor(t, "live after 3s", func(b []byte) bool { return bytes.Contains(b, []byte("0.001× simulated")) })
	scr.waitForLong(t, "oversold", func(b []byte) bool {
		return bytes.Contains(b, []byte("DONE")) && bytes.Contains(b, []byte("OVERSOLD"))
	})
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// A finished live run is a recording: home goes to its start and space
// plays it through, frame by frame.
func TestFinishedRunPlaysBack(t *testing.T) {
	t.Parallel()
	app := New(Options{Theme: themes.Mono(), Scenario: "ttl-expiry", Strategy: "safe", Seed: 3, SeedSet: true, Start: true,
		Speed: 10, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	scr := &terminal{tm: tm}
	scr.waitForLong(t, "done", func(b []byte) bool { return bytes.Contains(b, []byte("DONE")) })
	// The run is over: its log no longer changes. (The screen's counter is
	// no witness here: a frame's lines can arrive in two reads.)
	n := len(app.run.s.log.Events())
	mark := len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyHome})
	scr.waitFor(t, "at the start", since(mark, func(b []byte) bool {
		return bytes.Contains(b, []byte("event 0/")) && bytes.Contains(b, []byte("PAUSED"))
	}))
	tm.Send(keyRunes("-")) // a speed change after the end is taken
	scr.waitFor(t, "slower", since(mark, func(b []byte) bool { return bytes.Contains(b, []byte("5× playback")) }))
	mark = len(scr.all)
	tm.Send(keyRunes(" "))
	scr.waitForLong(t, "played to the end", since(mark, func(b []byte) bool {
		return bytes.Contains(b, []byte("PLAYING")) && lastCounter(b) == n && bytes.Contains(b, []byte("DONE"))
	}))
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// Playback moves frame by frame: frames on time pass through the run's
// events one stretch at a time, and a frame that comes late (a busy
// machine) moves the playhead no further than lateFrames frames would.
// The frames' times are given, as a recording gives them: no wall clock.
func TestPlaybackMovesFrameByFrame(t *testing.T) {
	f, err := os.Open("testdata/crash.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l, err := scenario.LoadLog(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	v := newRunView(replaySession("crash.jsonl", l), 5)
	v.toStart()
	v.togglePause()
	if v.paused {
		t.Fatal("space did not start playback")
	}
	epoch := time.Unix(0, 0)
	v.onFrame(epoch)
	seen := map[int]bool{}
	at := epoch
	for range 100000 {
		if v.paused {
			break
		}
		at = at.Add(frameEvery)
		v.onFrame(at)
		seen[v.cursor] = true
	}
	if !v.paused || v.cursor != v.tl.N-1 {
		t.Fatalf("playback stopped at event %d of %d", v.cursor, v.tl.N)
	}
	if len(seen) < 4 {
		t.Fatalf("playback showed the cursor at %d place(s) only: %v", len(seen), seen)
	}
	v.toStart()
	v.togglePause()
	v.onFrame(at)
	before := v.playT
	v.onFrame(at.Add(time.Minute)) // a minute-long stall
	if got, most := v.playT-before, time.Duration(float64(lateFrames*frameEvery)*v.speed); got > most {
		t.Fatalf("a late frame moved the playhead %v, at most %v", got, most)
	}
}

// ← then → from the end of ttl-expiry/safe crosses the two-second gap
// before w00's stale write, instead of sticking on the event before it.
func TestSeekCrossesGaps(t *testing.T) {
	t.Parallel()
	app := New(Options{Theme: themes.Mono(), Scenario: "ttl-expiry", Strategy: "safe", Seed: 1, SeedSet: true, Start: true,
		Speed: 10, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	scr := &terminal{tm: tm}
	scr.waitForLong(t, "done", func(b []byte) bool { return bytes.Contains(b, []byte("DONE")) })
	stale := -1
	evs := app.run.s.log.Events() // the run is over: its log no longer changes
	for i, e := range evs {
		if e.Kind == event.KindWrite && e.Worker == 0 && e.T >= event.Millis(3*time.Second).D() {
			stale = i
		}
	}
	if stale < 0 {
		t.Fatal("no stale write by w00 at ≥ 3s in the run")
	}
	// ← steps back a twentieth of the run. The run keeps a 10× clock: a
	// busy machine can end it well after the stale write, so step back as
	// often as it takes to stand before that write (once, most often).
	end := evs[len(evs)-1].T
	stride := end / seekShare
	backs := int((end-evs[stale].T)/stride) + 1
	mark := len(scr.all)
	for range backs {
		tm.Send(tea.KeyMsg{Type: tea.KeyLeft})
	}
	scr.waitFor(t, "back", since(mark, func(b []byte) bool { c := lastCounter(b); return c > 0 && c <= stale }))
	mark = len(scr.all)
	for range 3 {
		tm.Send(tea.KeyMsg{Type: tea.KeyRight})
	}
	out := scr.waitFor(t, "forward past the gap", since(mark, func(b []byte) bool { return lastCounter(b) > stale }))
	// The run keeps a 10× clock: a late start moves the stale write past
	// 3.x s, so the playhead is read as a time, not as a spelling.
	ts := headerTimes.FindAllSubmatch(out[mark:], -1)
	if len(ts) == 0 {
		t.Fatal("no playhead time in the header")
	}
	if at, err := time.ParseDuration(string(ts[len(ts)-1][1])); err != nil || at < 3*time.Second {
		t.Fatalf("the playhead is not at ≥ 3s: %q", ts)
	}
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// From t=0, → moves the playhead even where no event lies.
func TestSeekFromTheStartMoves(t *testing.T) {
	t.Parallel()
	v := loadView(t, "oversell-none.jsonl")
	v.onFrame(time.Now())
	v.toStart()
	if v.now() != 0 || v.cursor != -1 {
		t.Fatalf("home: t %v cursor %d", v.now(), v.cursor)
	}
	prev := v.now()
	for i := range seekShare {
		v.seek(1)
		if v.now() <= prev {
			t.Fatalf("→ number %d stayed at %v", i+1, v.now())
		}
		prev = v.now()
	}
	if v.cursor != v.tl.N-1 || v.mode() != "END" {
		t.Fatalf("%d × → ends at event %d of %d, %s", seekShare, v.cursor+1, v.tl.N, v.mode())
	}
}

// The speed ladder reaches both ends and stops there.
func TestSpeedLadder(t *testing.T) {
	t.Parallel()
	v := loadView(t, "oversell-none.jsonl")
	for range len(speeds) + 2 {
		v.changeSpeed(-1)
	}
	if v.speed != speeds[0] {
		t.Fatalf("slowest %g", v.speed)
	}
	for range len(speeds) + 2 {
		v.changeSpeed(1)
	}
	if v.speed != speeds[len(speeds)-1] {
		t.Fatalf("fastest %g", v.speed)
	}
	v.speed = 0.3 // between two steps, from --speed
	v.changeSpeed(1)
	if v.speed != 0.5 {
		t.Fatalf("0.3 + → %g, want 0.5", v.speed)
	}
}

var headerTimes = regexp.MustCompile(`│ t ([0-9.]+[µm]?s) │`)

// waitForLong is waitFor for a whole run at a human pace.
func (s *terminal) waitForLong(t *testing.T, what string, cond func([]byte) bool) []byte {
	t.Helper()
	if cond(s.all) {
		return s.all
	}
	teatest.WaitFor(t, s.tm.Output(), func(b []byte) bool {
		s.all = append(s.all, b...)
		return cond(s.all)
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	return s.all
}

// The fault menu is modal: the world stands still while it is open, and
// none of its keys reaches the run view (s would save the log, n rerun).
func TestFaultMenuIsModal(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("ttl-expiry")
	p := sc.Defaults
	// w00 holds for seconds of real time, so that a slow machine (the race
	// detector beside other packages) still draws a frame of it holding.
	p.TTL, p.Work = event.Millis(5*time.Second), event.Millis(10*time.Second)
	app := New(Options{Theme: themes.Mono(), Scenario: "ttl-expiry", Strategy: "safe", Params: &p, Seed: 1, SeedSet: true, Start: true,
		Speed: 1, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24))
	scr := &terminal{tm: tm}
	// The lock lane names the holder for as long as it holds (a second at
	// 1×); the log tail's line for its entry may scroll by between frames.
	scr.waitFor(t, "holder", func(b []byte) bool { return bytes.Contains(b, []byte("lock:stock: w00")) })
	tm.Send(keyRunes("f"))
	scr.waitFor(t, "menu", func(b []byte) bool { return bytes.Contains(b, []byte("stands still")) })
	clk := app.run.s.clock()
	frozen := clk.Now()
	for _, k := range []string{"s", "n", "s", "n", "y"} {
		tm.Send(keyRunes(k))
	}
	scr.waitFor(t, "wrong key", func(b []byte) bool { return bytes.Contains(b, []byte(`"y" is not a fault key`)) })
	if clk.Now() != frozen {
		t.Fatal("the world went on while the fault menu was open")
	}
	mark := len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	scr.waitFor(t, "resumed", since(mark, func(b []byte) bool { return bytes.Contains(b, []byte("LIVE")) }))
	run := app.run
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if run.s.spec.Seed != 1 {
		t.Fatalf("a fault key reran the scenario with seed %d", run.s.spec.Seed)
	}
	if strings.HasPrefix(run.status, "saved") {
		t.Fatalf("a fault key saved the log: %q", run.status)
	}
	stopped := 0
	for _, e := range run.s.log.Events() {
		if e.Kind == event.KindNodeDown || e.Kind == event.KindNodeUp {
			stopped++
		}
	}
	if stopped != 2 {
		t.Fatalf("s twice made %d node event(s), want a stop and a start", stopped)
	}
}
