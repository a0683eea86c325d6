package event_test

import (
	"sync"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

func TestLogConcurrentEmitAndRead(t *testing.T) {
	clk := store.NewClock(1)
	l := event.NewLog(clk, nil)
	const writers, each = 8, 3000 // crosses several chunks
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // a reader draining like a UI frame loop
		var buf []event.Event
		cursor := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			buf, cursor = l.Read(cursor, buf[:0])
			for i := range buf {
				if buf[i].Kind != event.KindAttempt {
					t.Errorf("read a half-written event: %+v", buf[i])
					return
				}
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				l.Emit(event.Event{Worker: int32(w), Kind: event.KindAttempt})
			}
		}()
	}
	wg.Wait()
	close(stop)
	evs := l.Events()
	if len(evs) != writers*each {
		t.Fatalf("%d events, want %d", len(evs), writers*each)
	}
	for i, e := range evs {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if i > 0 && e.T < evs[i-1].T {
			t.Fatalf("time went back at %d: %v < %v", i, e.T, evs[i-1].T)
		}
	}
	part, next := l.Read(4090, nil)
	if next != len(evs) || len(part) != len(evs)-4090 || part[0].Seq != 4090 {
		t.Fatalf("Read(4090): %d events, next %d", len(part), next)
	}
}

func TestLogDerivesViolationsInline(t *testing.T) {
	l := event.NewLog(store.NewClock(0), check.NewChecker())
	l.Emit(event.Event{Worker: 0, Kind: event.KindWorkStart, Res: "stock"})
	l.Emit(event.Event{Worker: 1, Kind: event.KindWorkStart, Res: "stock"})
	evs := l.Events()
	if len(evs) != 3 || evs[2].Kind != event.KindViolation || evs[2].Code != check.CodeOverlap || evs[2].Peer != 0 {
		t.Fatalf("events: %+v", evs)
	}
}

// Emit allocates nothing in steady state, checker and narration included:
// a worker's event is copied into the log, never moved to the heap.
func TestEmitDoesNotAllocate(t *testing.T) {
	sc, _ := scenario.Lookup("oversell")
	clock := store.NewClock(1)
	l := event.NewLog(clock, sc.Deriver("safe", sc.Defaults))
	e := event.Event{Worker: 3, Kind: event.KindDenied, Res: "lock:stock", Msg: "held"}.WithCall(clock.Now())
	l.Emit(e)
	// AllocsPerRun divides whole allocations by runs: the log's own chunk
	// (one per 4096 events) does not count, one per event would.
	if n := testing.AllocsPerRun(1000, func() { l.Emit(e) }); n != 0 {
		t.Fatalf("Emit allocates %v times per event", n)
	}
}
