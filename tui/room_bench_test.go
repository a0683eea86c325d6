package tui

import (
	"context"
	"fmt"
	"slices"
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
// reports the frame time (the frame's fold and its View, mean and p99),
// and the events per second the stream brought into the host's log.
//
//	go test ./tui -run '^$' -bench HostRoom30x5 -benchtime 3x
func BenchmarkHostRoom30x5(b *testing.B) { benchRoom(b, 0) }

// BenchmarkHostRoom30x5Views100 is BenchmarkHostRoom30x5 with a hundred
// participants' views (half 80×24, half 120×40, each marking a joiner's
// lanes) on the host's stage, as over SSH: each frame, after the host's,
// every one of them updates and draws once. views-ms is what one frame
// of all hundred costs: the round is folded once for them all, so it
// grows with the views' own drawing, not with the views times the log.
//
//	go test ./tui -run '^$' -bench HostRoom30x5Views100 -benchtime 3x
func BenchmarkHostRoom30x5Views100(b *testing.B) { benchRoom(b, 100) }

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
	var frames, viewFrames []time.Duration
	var events, overlaps int
	var racing time.Duration
	b.ResetTimer()
	for range b.N {
		run, _, err := h.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		stage := NewStage("bench", "")
		stage.SetRound(run)
		v := NewHostView(stage, nil, themes.Dark(), 160, 48)
		views := make([]*ParticipantView, viewers)
		for i := range views {
			w, h := 80, 24
			if i%2 == 1 {
				w, h = 120, 40
			}
			views[i] = NewParticipantView(stage, &Participation{Name: fmt.Sprintf("a%02d", i%joiners), Fire: make(chan struct{}, 1),
				Said: &Said{}, Done: make(chan struct{})}, themes.Dark(), w, h)
		}
		tick := time.NewTicker(frameEvery)
		var first, last time.Time
		for running := true; running; {
			select {
			case <-run.Done():
				running = false
			case <-tick.C:
			}
			t0 := time.Now()
			v.Update(frameMsg(t0))
			_ = v.View()
			frames = append(frames, time.Since(t0))
			if len(views) > 0 {
				t1 := time.Now()
				for _, pv := range views {
					pv.Update(frameMsg(t1))
					_ = pv.View()
				}
				viewFrames = append(viewFrames, time.Since(t1))
			}
			if run.Log.Len() > 1 && first.IsZero() {
				first = t0
			}
			last = t0
		}
		tick.Stop()
		if err := run.Wait(); err != nil {
			b.Fatal(err)
		}
		s := run.Summary()
		if s.Successes != joiners*workers {
			b.Fatalf("%d sold of %d: %s", s.Successes, joiners*workers, s.Verdict)
		}
		// Lanes of two machines are ordered no better than their clocks'
		// sync: a hand-off faster than that can read as an overlap.
		overlaps += s.Overlaps
		events += run.Log.Len()
		racing += last.Sub(first)
	}
	b.StopTimer()
	cancel()
	for range joiners {
		<-errs
	}
	slices.Sort(frames)
	var sum time.Duration
	for _, f := range frames {
		sum += f
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(frames))/1000, "frame-ms")
	b.ReportMetric(float64(frames[len(frames)*99/100].Microseconds())/1000, "frame-p99-ms")
	if len(viewFrames) > 0 {
		slices.Sort(viewFrames)
		var vs time.Duration
		for _, f := range viewFrames {
			vs += f
		}
		b.ReportMetric(float64(vs.Microseconds())/float64(len(viewFrames))/1000, "views-ms")
		b.ReportMetric(float64(viewFrames[len(viewFrames)*99/100].Microseconds())/1000, "views-p99-ms")
	}
	b.ReportMetric(float64(events)/racing.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/round")
	b.ReportMetric(float64(overlaps)/float64(b.N), "overlaps/round")
}
