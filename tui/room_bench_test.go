package tui

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/workshop"
)

// BenchmarkHostRoom30x5 is a workshop round on a redis-server the
// benchmark starts: 30 joiners with 5 workers each (in this process, each
// with its own connections, its own stream batches and its own clock
// sync), oversell with the safe lock and full-jitter retries for stock
// 150. The host's view (160×48) takes a frame every 33 ms while the round
// streams in, as the host's screen does; each iteration is one round. It
// reports the host's frame time (the frame's fold and its View: mean, p50
// and p99), the events per second the stream brought into the host's log,
// and the heap's peak.
//
//	go test ./tui -run '^$' -bench 'HostRoom30x5$' -benchtime 3x
func BenchmarkHostRoom30x5(b *testing.B) { benchRoom(b, 0) }

// BenchmarkHostRoom30x5Views100 is BenchmarkHostRoom30x5 with a hundred
// participants' views (half 80×24, half 120×40, each marking a joiner's
// lanes, in the host's theme) on the host's stage, run as the SSH server
// runs them: each in its own goroutine at its own pace (remote views' 10
// frames a second), updating and drawing only with one of as many draw
// tokens as the server gives (one core fewer than the process has). The
// host's frame is timed while they draw; view-ms is one view's frame (its
// Update and View, without the wait for a token) and views-fps the frames
// a view got a second.
//
//	go test ./tui -run '^$' -bench HostRoom30x5Views100 -benchtime 3x
func BenchmarkHostRoom30x5Views100(b *testing.B) { benchRoom(b, 100) }

// viewPace is a remote view's time between frames in the benchmark (the
// SSH server's pace).
const viewPace = 100 * time.Millisecond

// roomFigures are what benchRoom measures.
type roomFigures struct {
	frames, viewFrames []time.Duration
	viewSeconds        float64 // the views' time on stage, summed
	events, overlaps   int
	racing             time.Duration
	peakHeap           uint64
}

func benchRoom(b *testing.B, viewers int) {
	const joiners, workers = 30, 5
	srv := storetest.Start(b)
	storetest.QuietRedis()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock, p.Retry, p.MaxRetries = joiners*workers, "full-jitter", 200
	p.RetryBase, p.RetryCap = event.Millis(5*time.Millisecond), event.Millis(200*time.Millisecond)
	h, err := workshop.OpenHost(ctx, workshop.HostConfig{URL: srv.URL, Room: "bench", Scenario: "oversell", Strategy: "safe",
		Params: p, Seed: 1, Tool: "locklab bench", Lead: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	errs := make(chan error, joiners)
	for i := range joiners {
		go func() {
			errs <- workshop.Join(ctx, workshop.JoinConfig{URL: srv.URL, Room: "bench", Name: fmt.Sprintf("a%02d", i), Workers: workers})
		}()
	}
	for {
		l, err := h.Lobby(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(l) == joiners {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var f roomFigures
	b.ResetTimer()
	for range b.N {
		run, _, err := h.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		benchRound(b, run, viewers, &f)
		s := run.Summary()
		if s.Successes != joiners*workers {
			b.Fatalf("%d sold of %d: %s", s.Successes, joiners*workers, s.Verdict)
		}
		// Lanes of two machines are ordered no better than their clocks'
		// sync: a hand-off faster than that can read as an overlap.
		f.overlaps += s.Overlaps
		f.events += run.Log.Len()
	}
	b.StopTimer()
	cancel()
	for range joiners {
		<-errs
	}
	f.report(b)
}

// benchRound puts run on a stage with the host's view and viewers
// participants' views, and times their frames until the round ends.
func benchRound(b *testing.B, run *scenario.Run, viewers int, f *roomFigures) {
	stage := NewStage("bench", "")
	stage.SetRound(run)
	th := themes.Dark() // the host's, which its SSH server gives every view
	v := NewHostView(stage, nil, th, 160, 48)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	tokens := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
	began := time.Now()
	for i := range viewers {
		w, h := 80, 24
		if i%2 == 1 {
			w, h = 120, 40
		}
		pv := NewParticipantView(stage, &Participation{Name: fmt.Sprintf("a%02d", i%30), Fire: make(chan struct{}, 1),
			Said: &Said{}, Done: make(chan struct{})}, th, w, h)
		wg.Add(1)
		go pprof.Do(context.Background(), pprof.Labels("frame", "view"), func(context.Context) {
			defer wg.Done()
			mine := viewFrames(pv, tokens, stop, time.Duration(i)*viewPace/time.Duration(viewers))
			mu.Lock()
			f.viewFrames = append(f.viewFrames, mine...)
			mu.Unlock()
		})
	}
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	tick := time.NewTicker(frameEvery)
	var first, last time.Time
	for running := true; running; {
		select {
		case <-run.Done():
			running = false
		case <-tick.C:
		}
		t0 := time.Now()
		pprof.Do(context.Background(), pprof.Labels("frame", "host"), func(context.Context) {
			v.Update(frameMsg(t0))
			_ = v.View()
		})
		f.frames = append(f.frames, time.Since(t0))
		if run.Log.Len() > 1 && first.IsZero() {
			first = t0
		}
		last = t0
		metrics.Read(heap)
		f.peakHeap = max(f.peakHeap, heap[0].Value.Uint64())
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	f.viewSeconds += float64(viewers) * time.Since(began).Seconds()
	if err := run.Wait(); err != nil {
		b.Fatal(err)
	}
	f.racing += last.Sub(first)
}

// viewFrames runs one remote view's frames, after a start offset, until
// stop: each Update and each View waits for a draw token, as the SSH
// server's views do. It returns each frame's time without the waits.
func viewFrames(pv *ParticipantView, tokens chan struct{}, stop <-chan struct{}, offset time.Duration) []time.Duration {
	var out []time.Duration
	select {
	case <-stop:
		return nil
	case <-time.After(offset):
	}
	tick := time.NewTicker(viewPace)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
		}
		tokens <- struct{}{}
		t0 := time.Now()
		pv.Update(frameMsg(t0))
		d := time.Since(t0)
		<-tokens
		tokens <- struct{}{}
		t1 := time.Now()
		_ = pv.View()
		out = append(out, d+time.Since(t1))
		<-tokens
	}
}

func (f *roomFigures) report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	at := func(ds []time.Duration, q int) time.Duration { return ds[min(len(ds)-1, len(ds)*q/100)] }
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return ms(sum) / float64(len(ds))
	}
	slices.Sort(f.frames)
	b.ReportMetric(mean(f.frames), "frame-ms")
	b.ReportMetric(ms(at(f.frames, 50)), "frame-p50-ms")
	b.ReportMetric(ms(at(f.frames, 99)), "frame-p99-ms")
	if len(f.viewFrames) > 0 {
		slices.Sort(f.viewFrames)
		b.ReportMetric(mean(f.viewFrames), "view-ms")
		b.ReportMetric(ms(at(f.viewFrames, 99)), "view-p99-ms")
		b.ReportMetric(float64(len(f.viewFrames))/f.viewSeconds, "views-fps")
	}
	b.ReportMetric(float64(f.events)/f.racing.Seconds(), "events/s")
	b.ReportMetric(float64(f.events)/float64(b.N), "events/round")
	b.ReportMetric(float64(f.overlaps)/float64(b.N), "overlaps/round")
	b.ReportMetric(float64(f.peakHeap)/(1<<20), "heap-MiB")
}
