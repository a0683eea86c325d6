package scenario_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// pausedOversell is oversell with a short TTL, on seed 1, with faults.
func pausedOversell(strategy, retry string, faults ...scenario.Timed) scenario.Config {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.TTL = event.Millis(200 * time.Millisecond)
	if retry != "" {
		p.Retry = retry
	}
	return scenario.Config{Scenario: "oversell", Strategy: strategy, Seed: 1, Params: p, Faults: faults}
}

// runOf runs cfg in simulation: its log's body (the lines after the
// header, byte for byte) and its events.
func runOf(t *testing.T, cfg scenario.Config) ([]byte, []event.Event) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Nodes: cfg.Params.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events = &buf
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil || !r.Simulated() {
		t.Fatalf("run: %v (simulated: %v)", err, r.Simulated())
	}
	rec, err := check.ReadRecording(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	return body, rec.Events
}

// find is w's first event of kind k, and whether there is one.
func find(es []event.Event, w int32, k event.Kind) (event.Event, bool) {
	for _, e := range es {
		if e.Worker == w && e.Kind == k {
			return e, true
		}
	}
	return event.Event{}, false
}

func pauseOf(w int32, at, d time.Duration) scenario.Timed {
	return scenario.Timed{At: at, Fault: scenario.Fault{Kind: scenario.FaultPause, Worker: w, D: d}}
}

// holderOf is the first worker to take the lock in a run without faults,
// and its events.
func holderOf(t *testing.T, cfg scenario.Config) (int32, []event.Event) {
	t.Helper()
	_, es := runOf(t, cfg)
	for _, e := range es {
		if e.Kind == event.KindAcquired {
			return e.Worker, es
		}
	}
	t.Fatal("nobody took the lock")
	return -1, nil
}

func TestAPauseStopsABuyerThatNeverSleepsOnItsOwn(t *testing.T) {
	cfg := pausedOversell("safe", "")
	h, calm := holderOf(t, cfg)
	w0, _ := find(calm, h, event.KindWrite)
	const at, d = time.Millisecond, time.Second
	if w0.Call >= at+d {
		t.Fatalf("without a pause %s writes at %v: the test needs it earlier", check.WorkerName(h), w0.Call)
	}
	cfg.Faults = []scenario.Timed{pauseOf(h, at, d)}
	body, es := runOf(t, cfg)
	if again, _ := runOf(t, cfg); !bytes.Equal(body, again) {
		t.Fatal("the same seed and pause gave two histories")
	}
	if p, ok := find(es, h, event.KindPause); !ok || p.T != at {
		t.Fatalf("pause logged %v (%v), want at %v", p.T, ok, at)
	}
	w, ok := find(es, h, event.KindWrite)
	if !ok || w.Call < at+d {
		t.Fatalf("%s sent its write at %v, want after the pause ends at %v", check.WorkerName(h), w.Call, at+d)
	}
	// Its TTL lapsed under it: its release finds the lock gone, and the
	// narration does not say it wrote inside the lock.
	if rf, ok := find(es, h, event.KindReleaseFailed); !ok || rf.T < at+d {
		t.Fatalf("release after the pause: %+v (%v), want refused", rf, ok)
	}
	for _, e := range es {
		if e.Kind == event.KindBeat && e.Code == "write" && !strings.Contains(e.Msg, "without the lock") {
			t.Errorf("write beat: %q", e.Msg)
		}
	}
}

func TestAReplySentBeforeAPauseWaitsForTheWorker(t *testing.T) {
	cfg := pausedOversell("safe", "")
	h, calm := holderOf(t, cfg)
	r0, _ := find(calm, h, event.KindRead)
	// Midway through the read's round trip: the command is on its way.
	at, d := r0.Call+(r0.T-r0.Call)/2, 500*time.Millisecond
	if at <= r0.Call || at >= r0.T {
		t.Fatalf("the read took %v..%v: no instant inside it", r0.Call, r0.T)
	}
	cfg.Faults = []scenario.Timed{pauseOf(h, at, d)}
	_, es := runOf(t, cfg)
	r, ok := find(es, h, event.KindRead)
	if !ok || r.Call != r0.Call || r.T < at+d || r.Stock != r0.Stock {
		t.Fatalf("read %+v, want sent at %v as before and seen after %v", r, r0.Call, at+d)
	}
}

func TestAPausedHolderOutlivesItsLease(t *testing.T) {
	for _, c := range []struct {
		strategy string
		want     event.Kind // what the paused holder's late write meets
	}{{"safe", event.KindViolation}, {"fenced", event.KindFenceRejected}} {
		t.Run(c.strategy, func(t *testing.T) {
			cfg := pausedOversell(c.strategy, "exponential")
			h, _ := holderOf(t, cfg)
			const at, d = time.Millisecond, time.Second
			cfg.Faults = []scenario.Timed{pauseOf(h, at, d)}
			_, es := runOf(t, cfg)
			var overlap, met bool
			for _, e := range es {
				overlap = overlap || (e.Kind == event.KindViolation && e.Code == check.CodeOverlap && e.Peer == h && e.T < at+d)
				met = met || (e.Worker == h && e.Kind == c.want && e.T >= at+d)
			}
			if !overlap || !met {
				t.Fatalf("overlap with %s during its pause: %v; its late write met %v: %v", check.WorkerName(h), overlap, c.want, met)
			}
		})
	}
}

func TestTheWatchdogStopsWithItsWorker(t *testing.T) {
	cfg := pausedOversell("watchdog", "")
	cfg.Params.Delay = event.Millis(400 * time.Millisecond) // long enough to renew
	h, calm := holderOf(t, cfg)
	if _, ok := find(calm, h, event.KindRenewed); !ok {
		t.Fatalf("without a pause %s never renews", check.WorkerName(h))
	}
	const at, d = 10 * time.Millisecond, time.Second
	cfg.Faults = []scenario.Timed{pauseOf(h, at, d)}
	_, es := runOf(t, cfg)
	for _, e := range es {
		if e.Worker == h && e.Kind == event.KindRenewed && e.T > at && e.T < at+d {
			t.Fatalf("renewed at %v, during its worker's pause", e.T)
		}
	}
	if l, ok := find(es, h, event.KindLockLost); !ok || l.T < at+d {
		t.Fatalf("lock lost: %+v (%v), want found after the pause", l, ok)
	}
}
