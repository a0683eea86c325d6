package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/clock"
)

func TestASleepEndsOnlyOnceItsGateOpens(t *testing.T) {
	c := clock.NewClock(1)
	open := make(chan struct{})
	passed := 0
	gate := func(ctx context.Context) error {
		passed++
		select {
		case <-open:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ctx := clock.WithGate(context.Background(), gate)
	go func() { time.Sleep(50 * time.Millisecond); close(open) }()
	start := time.Now()
	if err := c.Sleep(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 40*time.Millisecond || passed != 1 {
		t.Fatalf("slept %v, passed the gate %d time(s): want held until it opened, once", took, passed)
	}
	// Past the gate (the pause's own sleep), a sleep does not wait at it.
	shut := clock.WithGate(context.Background(), func(context.Context) error { return errors.New("shut") })
	if err := c.Sleep(clock.PastGate(shut), time.Millisecond); err != nil {
		t.Fatalf("past the gate: %v", err)
	}
	if err := c.Sleep(shut, time.Millisecond); err == nil || clock.PassGate(shut) == nil {
		t.Fatal("a shut gate let a sleep through")
	}
	if clock.PassGate(context.Background()) != nil || clock.PastGate(context.Background()) != context.Background() {
		t.Fatal("a context without a gate has one")
	}
}
