package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// The machine is blamed once, and only for what the scenario and its
// server do not explain: a late answer of the embedded Redis, a planned
// wait that overran. An answer of another server (an etcd election that
// waits by design for the lease before it) blames nothing.
func TestTheMachineIsBlamedOnlyForWhatItDid(t *testing.T) {
	speed := func() float64 { return 10 }
	late := event.Event{Kind: event.KindAcquired, Worker: 3}.WithCall(100 * time.Millisecond)

	l := newLagWatch(time.Second, true, speed)
	if _, ok := l.answer(&late, 110*time.Millisecond); ok {
		t.Fatal("an answer back in 10ms blamed the machine (the limit is a twentieth of the TTL)")
	}
	b, ok := l.answer(&late, 720*time.Millisecond)
	if !ok || !strings.Contains(b.Msg, "at 10×: w03's acquire took 620ms") || b.Code != check.BeatMachine {
		t.Fatalf("a 620ms answer of the embedded server: %v %+v", ok, b)
	}
	if !strings.HasSuffix(b.Msg, "run at --speed 1, or run it alone, on a machine less busy (this run keeps real time).") {
		t.Errorf("a run that cannot be simulated is advised: %q", b.Msg)
	}
	if _, ok := l.overran(1, time.Second, time.Second); ok {
		t.Fatal("the machine was blamed twice in one run")
	}

	asked := newLagWatch(time.Second, true, func() float64 { return 1 })
	asked.simulable = true
	if b, ok := asked.answer(&late, 720*time.Millisecond); !ok || !strings.HasSuffix(b.Msg, "not the lock's: run in the simulation (without --realtime).") {
		t.Errorf("a run kept in real time at 1× on request: %q", b.Msg)
	}

	other := newLagWatch(time.Second, false, speed)
	if _, ok := other.answer(&late, 2*time.Second); ok {
		t.Fatal("a slow answer of a server that is not the embedded Redis blamed the machine")
	}
	if b, ok := other.overran(1, 100*time.Millisecond, 520*time.Millisecond); !ok || !strings.Contains(b.Msg, "w01's wait of 100ms took 620ms") {
		t.Fatalf("a planned wait that overran: %v %+v", ok, b)
	}
}
