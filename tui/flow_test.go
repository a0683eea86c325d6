package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	_ "github.com/locklab/locklab/lock/all" // every strategy the picker lists

	"github.com/locklab/locklab/event"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/themes"
	"go.uber.org/goleak"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: most wait on a run's clock or a
// terminal's next frame, not on the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	storetest.QuietRedis()
	storetest.WidenParallel(parallelTests)
	// teatest leaves one goroutine per test model waiting for SIGINT.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"))
}

func keyRunes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

var eventCounter = regexp.MustCompile(`event (\d+)/(\d+)`)

// lastCounter is the last "event k/n" the terminal showed.
func lastCounter(out []byte) int {
	m := eventCounter.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return -1
	}
	k, _ := strconv.Atoi(string(m[len(m)-1][1]))
	return k
}

// terminal accumulates everything the program wrote.
type terminal struct {
	tm  *teatest.TestModel
	all []byte
}

// waitFor waits until cond holds for the output so far.
func (s *terminal) waitFor(t *testing.T, what string, cond func([]byte) bool) []byte {
	t.Helper()
	if cond(s.all) {
		return s.all
	}
	teatest.WaitFor(t, s.tm.Output(), func(b []byte) bool {
		s.all = append(s.all, b...)
		return cond(s.all)
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	return s.all
}

// since is a condition on the output written after mark.
func since(mark int, cond func([]byte) bool) func([]byte) bool {
	return func(b []byte) bool { return len(b) > mark && cond(b[mark:]) }
}

func TestFlowPickRunPauseStepQuit(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.Delay = 4, event.Millis(3*time.Second) // a run that lasts
	app := New(Options{Theme: themes.Mono(), Scenario: "oversell", Strategy: "none", Params: &p, Seed: 1, SeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	sc2 := &terminal{tm: tm}

	sc2.waitFor(t, "picker", func(b []byte) bool { return bytes.Contains(b, []byte("SCENARIO")) })
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter}) // → parameters
	sc2.waitFor(t, "form", func(b []byte) bool { return bytes.Contains(b, []byte("enter runs")) })
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter}) // → run
	sc2.waitFor(t, "live", func(b []byte) bool {
		return bytes.Contains(b, []byte("LIVE")) && bytes.Contains(b, []byte("enters critical section"))
	})
	mark := len(sc2.all)
	tm.Send(keyRunes(" "))
	out := sc2.waitFor(t, "paused", since(mark, func(b []byte) bool { return bytes.Contains(b, []byte("PAUSED")) }))
	at := lastCounter(out)
	if at < 2 {
		t.Fatalf("paused at event %d", at)
	}
	clk := app.run.s.clock()
	frozen := clk.Now()
	time.Sleep(200 * time.Millisecond)
	if clk.Now() != frozen {
		t.Fatal("the world's clock moved while paused")
	}
	tm.Send(keyRunes(","))
	sc2.waitFor(t, "step back", func(b []byte) bool { return lastCounter(b) == at-1 })
	tm.Send(keyRunes("."))
	sc2.waitFor(t, "step forward", func(b []byte) bool { return lastCounter(b) == at })
	st := app.run.s.store
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if app.run.s.store != nil {
		t.Fatal("quitting left the store open")
	}
	if n := st.Client(); n != nil {
		if err := n.Ping(context.Background()).Err(); err == nil {
			t.Fatal("the embedded Redis still answers after quit")
		}
	}
}

func TestReplayGivesTheLiveVerdict(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	f, _ := os.Create(path)
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = 15
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 4, Events: f})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	f.Close()
	st.Close()
	live := r.Summary().Verdict

	f, _ = os.Open(path)
	loaded, err := scenario.LoadLog(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	app := New(Options{Theme: themes.Mono(), Replay: loaded, Name: "run.jsonl"})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	scr := &terminal{tm: tm}
	scr.waitFor(t, "replay", func(b []byte) bool { return bytes.Contains(b, []byte("space plays")) })
	tm.Send(tea.KeyMsg{Type: tea.KeyEnd})
	scr.waitFor(t, "verdict", func(b []byte) bool { return bytes.Contains(b, []byte(live)) })
	if got := app.run.s.summary.Verdict; got != live {
		t.Fatalf("replay verdict %q, live %q", got, live)
	}
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestFaultKeysCrashTheHolder(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("ttl-expiry")
	p := sc.Defaults
	app := New(Options{Theme: themes.Mono(), Scenario: "ttl-expiry", Strategy: "watchdog", Params: &p, Seed: 1, SeedSet: true, Start: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 36))
	scr := &terminal{tm: tm}
	// The lock lane names the holder while it holds; the log tail's line
	// for its entry may scroll by between two frames.
	scr.waitFor(t, "holder", func(b []byte) bool { return bytes.Contains(b, []byte("lock:stock: w00")) })
	tm.Send(keyRunes("f"))
	scr.waitFor(t, "menu", func(b []byte) bool { return bytes.Contains(b, []byte("crash w00")) })
	tm.Send(keyRunes("c"))
	scr.waitFor(t, "crash", func(b []byte) bool { return bytes.Contains(b, []byte("w00 crashed")) })
	log := app.run.s.log
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	crashed := false
	for _, e := range log.Events() {
		if e.Kind == event.KindCrash && e.Worker == 0 {
			crashed = true
		}
	}
	if !crashed {
		t.Fatal("the crash key left no crash in the event log")
	}
}
