package tui

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/cast"
)

func loadTestdata(t testing.TB, name string) *scenario.Loaded {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := scenario.LoadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func record(t testing.TB, o RecordOptions, names ...string) []byte {
	t.Helper()
	var runs []*scenario.Loaded
	for _, n := range names {
		runs = append(runs, loadTestdata(t, n))
	}
	var b bytes.Buffer
	if err := Record(context.Background(), &b, runs, names, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRecordIsDeterministicAndValid(t *testing.T) {
	for _, present := range []bool{false, true} {
		o := RecordOptions{Theme: themes.Dark(), Width: 120, Height: 36, Present: present, Title: "t", Timestamp: 1, Speed: 1}
		a := record(t, o, "ttl-fenced.jsonl", "oversell-none-beats.jsonl")
		b := record(t, o, "ttl-fenced.jsonl", "oversell-none-beats.jsonl")
		if !bytes.Equal(a, b) {
			t.Fatalf("present=%v: two recordings of the same logs differ", present)
		}
		h, evs, err := cast.Read(bytes.NewReader(a))
		if err != nil {
			t.Fatalf("present=%v: %v", present, err)
		}
		if h.Width != 120 || h.Height != 36 || h.Timestamp != 1 || h.Title != "t" || h.Theme == nil || h.Theme.BG == "" {
			t.Fatalf("header %+v", h)
		}
		var beats, violations int
		for _, e := range evs {
			if e.Code == "m" && strings.HasPrefix(e.Data, "beat: ") {
				beats++
			}
			if e.Code == "m" && strings.HasPrefix(e.Data, "violation: ") {
				violations++
			}
		}
		if beats < 6 || violations < 2 {
			t.Fatalf("present=%v: %d beat and %d violation markers", present, beats, violations)
		}
		if present && evs[len(evs)-1].Time < 5*3 { // five beats or more, each held 3 s
			t.Fatalf("presenter recording lasts %.1fs: the captions were not held", evs[len(evs)-1].Time)
		}
	}
}

// TestAsciinemaCatShowsTheFinalScreen plays a recording with Debian's
// asciinema, which wants a terminal: script(1) gives it one.
func TestAsciinemaCatShowsTheFinalScreen(t *testing.T) {
	if _, err := exec.LookPath("asciinema"); err != nil {
		t.Skip("asciinema is not installed (apt-get install asciinema)")
	}
	path := filepath.Join(t.TempDir(), "ttl.cast")
	os.WriteFile(path, record(t, RecordOptions{Theme: themes.Mono(), Width: 100, Height: 30}, "ttl-fenced.jsonl"), 0o644)
	out, err := exec.Command("script", "-q", "-e", "-c", "asciinema cat "+path, "/dev/null").Output()
	if err != nil {
		t.Fatalf("asciinema cat: %v", err)
	}
	final := out[bytes.LastIndex(out, []byte("\x1b[2J")):]
	for _, want := range []string{"SAVED BY FENCING", "ttl-expiry · fenced", "stock 2 → 1"} {
		if !bytes.Contains(final, []byte(want)) {
			t.Errorf("the final screen has no %q", want)
		}
	}
}

func TestPresenterStopsAtEachBeat(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("ttl-expiry")
	p := sc.Defaults
	app := New(Options{Theme: themes.Mono(), Scenario: "ttl-expiry", Strategy: "safe", Params: &p, Seed: 1, SeedSet: true, Start: true, Present: true, Speed: 1, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30))
	scr := &terminal{tm: tm}
	scr.waitFor(t, "beat 1", func(b []byte) bool {
		return bytes.Contains(b, []byte("beat 1")) && bytes.Contains(b, []byte("w00 holds the lock for 1s")) && bytes.Contains(b, []byte("PAUSED"))
	})
	clk := app.run.s.clock()
	frozen := clk.Now()
	time.Sleep(150 * time.Millisecond)
	if clk.Now() != frozen {
		t.Fatal("the world went on while a beat was on screen")
	}
	mark := len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyRight})
	scr.waitFor(t, "beat 2", since(mark, func(b []byte) bool {
		return bytes.Contains(b, []byte("beat 2")) && bytes.Contains(b, []byte("TTL just lapsed"))
	}))
	mark = len(scr.all)
	tm.Send(tea.KeyMsg{Type: tea.KeyPgUp})
	scr.waitFor(t, "back to beat 1", since(mark, func(b []byte) bool { return bytes.Contains(b, []byte("beat 1")) }))
	mark = len(scr.all)
	tm.Send(keyRunes(" "))
	scr.waitFor(t, "beat 2 again", since(mark, func(b []byte) bool { return bytes.Contains(b, []byte("beat 2")) }))
	tm.Send(keyRunes("q")) // presenter mode asks once
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestNextMarkerFromTheStartIsTheFirstViolation(t *testing.T) {
	t.Parallel()
	l := loadTestdata(t, "oversell-none-beats.jsonl")
	first := -1
	for i, e := range l.Log.Events() {
		if e.Kind == event.KindViolation {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("the recorded run has no violation")
	}
	app := New(Options{Theme: themes.Mono(), Replay: l, Name: "run.jsonl"})
	v := app.run
	v.onFrame(time.Now())
	v.marker(1)
	if v.cursor != first || !strings.HasPrefix(v.status, "violation") {
		t.Fatalf("] from the start went to event %d (%q), the first violation is %d", v.cursor, v.status, first)
	}
}

// Recordings made at once in one process (two casts side by side) are the
// same bytes as one made alone: the colour profile a recording draws in
// stays until the last of them ends.
func TestRecordingsAtOnceAreIdentical(t *testing.T) {
	o := RecordOptions{Theme: themes.Dark(), Width: 100, Height: 30, Title: "t", Timestamp: 1, Speed: 4}
	alone := record(t, o, "ttl-fenced.jsonl")
	got := make([][]byte, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			name := "ttl-fenced.jsonl"
			if i%2 == 1 { // a shorter recording beside: it ends first
				name = "crash.jsonl"
			}
			var b bytes.Buffer
			if err := Record(context.Background(), &b, []*scenario.Loaded{loadTestdata(t, name)}, []string{name}, o); err != nil {
				t.Error(err)
			}
			got[i] = b.Bytes()
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for _, i := range []int{0, 2} {
		if !bytes.Equal(got[i], alone) {
			t.Fatalf("recording %d, made beside others, differs from the same recording made alone", i)
		}
	}
}
