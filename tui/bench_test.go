package tui

import (
	"bufio"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/tui/cast"
	"github.com/muesli/termenv"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// synth emits n events of a busy lock fight among workers: attempts,
// denials, backoffs, holders in the critical section renewing their lock,
// stock writes, and a beat every 100 rounds (marks and markers that grow
// with the log, as the lanes do).
type synth struct {
	rng     *mrand.Rand
	workers int
	t       time.Duration
	holder  int
	step    int
}

func newSynth(workers int) *synth {
	return &synth{rng: mrand.New(mrand.NewPCG(1, 2)), workers: workers, holder: -1}
}

func (s *synth) next() event.Event {
	s.t += time.Duration(s.rng.IntN(40)+1) * time.Microsecond
	w := int32(s.rng.IntN(s.workers))
	var e event.Event
	switch s.step % 12 {
	case 0:
		e = event.Event{Kind: event.KindAcquired, Res: "lock:stock", TTL: 5 * time.Second, Has: event.HasTTL, Token: "3fa9c0de"}
		s.holder = int(w)
	case 1:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindWorkStart, Res: "stock"}
	case 2:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(100)
	case 3:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindWrite, Res: "stock"}.WithStock(99).WithOK(true)
	case 4:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindWorkEnd, Res: "stock"}
	case 5:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindRelease, Res: "lock:stock"}.WithOK(true)
	case 6, 8:
		e = event.Event{Kind: event.KindAttempt, Res: "lock:stock"}
	case 7:
		e = event.Event{Kind: event.KindDenied, Res: "lock:stock", Msg: "held"}
	case 9:
		e = event.Event{Kind: event.KindBackoff, Res: "lock:stock", Delay: time.Duration(s.rng.IntN(200)) * time.Millisecond, Has: event.HasDelay}
	case 10:
		w = int32(max(s.holder, 0))
		e = event.Event{Kind: event.KindRenewed, Res: "lock:stock", TTL: 5 * time.Second, Has: event.HasTTL}
	case 11:
		w = event.System
		e = event.Event{Kind: event.KindBeat, Code: "round"}
		if s.step%1200 != 11 {
			e = event.Event{Kind: event.KindAttempt, Res: "lock:stock"}
			w = int32(s.rng.IntN(s.workers))
		}
	}
	s.step++
	e.Worker, e.T = w, s.t
	return e
}

func synthView(b testing.TB, workers, n int) *runView {
	s := newSynth(workers)
	l := event.NewLog(nil, nil)
	l.Append(event.Event{Kind: event.KindInit, Res: "stock", Worker: event.System}.WithStock(100))
	for range n - 1 {
		l.Append(s.next())
	}
	h := event.Header{Scenario: "oversell", Strategy: "safe", Store: "embedded", Params: event.Params{Workers: workers}}
	v := newRunView(replaySession("synthetic", &scenario.Loaded{Header: h, Log: l}), 1)
	v.toLive()
	v.status = ""
	return v
}

// BenchmarkView is the run view at 160×48 with 64 workers and 10 000,
// 250 000 and 1 000 000 events, drawn afresh every time (no cache), as in
// a live run where time moves every frame. The lanes are drawn from
// per-column summaries: the cost must not grow with the log.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{10_000, 250_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			v := synthView(b, 64, n)
			th := themes.Dark()
			b.ReportAllocs()
			runtime.GC()
			cpu0, ops := cpuTime(), 0
			for b.Loop() {
				v.cache = renderCache{}
				_ = v.View(th, 160, 47)
				ops++
			}
			// CPU time per frame: on a shared machine, wall time (ns/op)
			// also counts the time other processes had the CPU.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(ops), "cpu-ms/op")
		})
	}
}

// BenchmarkLiveIngest feeds a live log at 100 000 events/s from 16 worker
// goroutines while the UI loop folds and draws a frame every 33 ms. It
// reports the frame times and what an Emit costs a worker (p99, p99.99 and
// max; the max includes the OS taking the CPU away, not only the log).
func BenchmarkLiveIngest(b *testing.B) {
	for b.Loop() {
		clk := store.NewClock(1)
		l := event.NewLog(clk, check.NewChecker())
		h := event.Header{Scenario: "oversell", Strategy: "safe", Store: "embedded", Params: event.Params{Workers: 64}}
		v := newRunView(&session{header: h, log: l}, 1)
		v.follow, v.paused = true, false
		th := themes.Dark()
		const perSec, workers = 100_000, 16
		const dur = 3 * time.Second
		stop := make(chan struct{})
		var wg sync.WaitGroup
		emits := make([][]time.Duration, workers)
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := newSynth(64)
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				sent := 0
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					due := int(time.Since(start).Seconds() * perSec / workers)
					for ; sent < due; sent++ {
						e := s.next()
						t0 := time.Now()
						l.Emit(e)
						emits[w] = append(emits[w], time.Since(t0))
					}
				}
			}()
		}
		var frames []time.Duration
		end := start.Add(dur)
		for now := time.Now(); now.Before(end); now = time.Now() {
			t0 := time.Now()
			v.onFrame(now)
			_ = v.View(th, 160, 47)
			frames = append(frames, time.Since(t0))
			time.Sleep(frameEvery - time.Since(t0))
		}
		close(stop)
		wg.Wait()
		var all []time.Duration
		for _, e := range emits {
			all = append(all, e...)
		}
		slices.Sort(frames)
		slices.Sort(all)
		pct := func(d []time.Duration, p float64) float64 {
			return float64(d[min(int(float64(len(d))*p), len(d)-1)].Nanoseconds())
		}
		b.ReportMetric(float64(l.Len())/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(pct(frames, 0.5)/1e6, "p50-frame-ms")
		b.ReportMetric(pct(frames, 0.99)/1e6, "p99-frame-ms")
		b.ReportMetric(pct(frames, 1)/1e6, "max-frame-ms")
		b.ReportMetric(pct(all, 0.99), "p99-emit-ns")
		b.ReportMetric(pct(all, 0.9999)/1e3, "p99.99-emit-µs")
		b.ReportMetric(pct(all, 1)/1e3, "max-emit-µs")
	}
}

// writeSynthFile writes an n-event log file of the given lanes.
func writeSynthFile(b testing.TB, n, workers int) string {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	if err := writeSynth(path, n, workers); err != nil {
		b.Fatal(err)
	}
	return path
}

// TestSynthLog writes a synthetic log for measuring the real binary
// (locklab replay FILE): LOCKLAB_SYNTH_LOG=/tmp/big.jsonl
// LOCKLAB_SYNTH_EVENTS=5000000 [LOCKLAB_SYNTH_LANES=64] go test ./tui -run
// TestSynthLog. Without LOCKLAB_SYNTH_LOG it does nothing.
func TestSynthLog(t *testing.T) {
	path := os.Getenv("LOCKLAB_SYNTH_LOG")
	if path == "" {
		t.Skip("LOCKLAB_SYNTH_LOG names the file to write")
	}
	n := 5_000_000
	if s := os.Getenv("LOCKLAB_SYNTH_EVENTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	lanes := 64
	if s := os.Getenv("LOCKLAB_SYNTH_LANES"); s != "" {
		var err error
		if lanes, err = strconv.Atoi(s); err != nil || lanes < 1 {
			t.Fatalf("LOCKLAB_SYNTH_LANES must be a count of lanes (got %q)", s)
		}
	}
	if err := writeSynth(path, n, lanes); err != nil {
		t.Fatal(err)
	}
}

func writeSynth(path string, n, workers int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w, _ := check.NewWriter(bw, event.Header{Scenario: "oversell", Strategy: "safe", Store: "embedded", Params: event.Params{Workers: workers}})
	s := newSynth(workers)
	batch := make([]event.Event, 0, 4096)
	for i := 0; i < n; i++ {
		e := s.next()
		e.Seq = int64(i)
		batch = append(batch, e)
		if len(batch) == cap(batch) {
			w.Write(batch)
			batch = batch[:0]
		}
	}
	w.Write(batch)
	w.Close(&check.Summary{}) // a whole log ends with its end record
	bw.Flush()
	return f.Close()
}

// BenchmarkReplay1M is `locklab replay` of a 1 000 000-event file: open
// it and draw the first frame (the rest is read as frames go by), read and
// fold it all (load-ms, until the verdict is known); then seeks to random
// places; and the resident memory afterwards.
func BenchmarkReplay1M(b *testing.B) { benchReplay(b, 1_000_000, 64) }

// BenchmarkReplay5M is the same with 5 000 000 events (first frame ≤ 0.2 s,
// resident memory ≤ 1 GB).
func BenchmarkReplay5M(b *testing.B) { benchReplay(b, 5_000_000, 64) }

// BenchmarkReplay16M is the same with 16 000 000 events, about the most
// the reader takes (peak resident memory ≤ 1 GB). Its file takes 1.4 GB
// of the temporary directory while it runs.
func BenchmarkReplay16M(b *testing.B) { benchReplay(b, 16_000_000, 64) }

// BenchmarkReplayHeld is what a replay holds per event once read: the
// log, the view's fold and the seekable tally (heap-B/event, after a
// collection), for 64 and 1 000 lanes. A 16-million-event log, the most
// the reader takes, holds 16M × heap-B/event.
func BenchmarkReplayHeld(b *testing.B) {
	for _, lanes := range []int{64, 1000} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) { benchReplay(b, 400_000, lanes) })
	}
}

func benchReplay(b *testing.B, n, lanes int) {
	path := writeSynthFile(b, n, lanes)
	th := themes.Dark()
	// As locklab replay runs (cli's logGCPercent and replayMemoryLimit).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(900 << 20))
	for b.Loop() {
		runtime.GC()
		t0 := time.Now()
		f, _ := os.Open(path)
		ld, err := scenario.StreamLog(f)
		if err != nil {
			b.Fatal(err)
		}
		app := New(Options{Theme: th, Loading: ld, Name: "big.jsonl"})
		app.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		_ = app.View()
		first := time.Since(t0)
		for app.run.s.loading != nil || app.run.tl.N < app.run.s.log.Len() {
			app.Update(frameMsg(time.Now()))
			_ = app.View()
			time.Sleep(frameEvery)
		}
		f.Close()
		if ld.Err() != nil || app.run.s.summary == nil {
			b.Fatal("no verdict", ld.Err())
		}
		load := time.Since(t0)
		rng := mrand.New(mrand.NewPCG(3, 4))
		var worst time.Duration
		for range 50 {
			t1 := time.Now()
			target := time.Duration(rng.Int64N(int64(app.run.tl.Last)))
			app.run.cursor = app.run.lastAtOrBefore(target)
			app.run.follow, app.run.paused = false, true
			_ = app.View()
			worst = max(worst, time.Since(t1))
		}
		b.ReportMetric(float64(first.Milliseconds()), "first-frame-ms")
		b.ReportMetric(float64(load.Milliseconds()), "load-ms")
		b.ReportMetric(float64(worst.Microseconds())/1000, "worst-seek-ms")
		b.ReportMetric(rssMB(), "rss-MB")
		b.ReportMetric(peakRSSMB(), "peak-rss-MB")
		b.ReportMetric(heldPerEvent(app, n), "heap-B/event")
	}
}

// heldPerEvent is the live heap, after a collection, per event of the
// log the app holds.
func heldPerEvent(app *App, n int) float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(app)
	return float64(ms.HeapAlloc) / float64(n)
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssMB is this process's resident set size.
func rssMB() float64 { return statusMB("VmRSS:") }

// peakRSSMB is the most this process has held resident.
func peakRSSMB() float64 { return statusMB("VmHWM:") }

// statusMB is a size from /proc/self/status.
func statusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return -1
}

// BenchmarkFirstFrame is from New to the first drawn frame of a run on the
// embedded store: open the store, start the workers, draw.
func BenchmarkFirstFrame(b *testing.B) {
	for b.Loop() {
		app := New(Options{Theme: themes.Dark(), Scenario: "oversell", Strategy: "none", Start: true, Seed: 1, SeedSet: true})
		app.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
		app.form = newForm(app.picker.scenario(), app.picker.strategy(), app.opts)
		msg := app.start(app.form.spec())()
		app.Update(msg)
		app.Update(frameMsg(time.Now()))
		if !strings.Contains(app.View(), "swimlanes") {
			b.Fatal("no run view")
		}
		b.StopTimer()
		app.shutdown()
		b.StartTimer()
	}
}

// BenchmarkFrameCast is one frame as the program makes it — the view drawn
// afresh and written whole to the terminal (the worst case: Bubble Tea
// writes only the lines that changed) — without and with --cast, whose
// writer stamps and copies the frame and encodes it on its own goroutine.
// Compare the two ns/op.
func BenchmarkFrameCast(b *testing.B) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.ANSI256) // frames with colours, as on a terminal
	for _, withCast := range []bool{false, true} {
		name := "plain"
		if withCast {
			name = "cast"
		}
		b.Run(name, func(b *testing.B) {
			v := synthView(b, 64, 50_000)
			th := themes.Dark()
			var out io.Writer = io.Discard
			if withCast {
				rec, err := cast.NewWriter(io.Discard, cast.Header{Width: 160, Height: 48}, cast.WallClock())
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
				out = io.MultiWriter(io.Discard, rec)
			}
			last := v.tl.N - 1
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				v.cursor = last - i%100 // every frame differs
				i++
				v.cache = renderCache{}
				io.WriteString(out, v.View(th, 160, 47))
			}
		})
	}
}
