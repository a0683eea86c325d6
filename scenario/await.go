package scenario

import (
	"context"
	"reflect"
	"time"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/sim"
)

// await waits until one of chs is closed or ctx ends, and says which (−1:
// ctx ended). In a simulation the actor waits as an actor.
func await(ctx context.Context, chs ...<-chan struct{}) (int, error) {
	if rt := sim.Of(ctx); rt != nil {
		got := -1
		ready := func() bool {
			for i, ch := range chs {
				if isClosed(ch) {
					got = i
					return true
				}
			}
			return false
		}
		if ready() {
			return got, nil
		}
		if err := rt.Block(ctx, ready); err != nil {
			return -1, err
		}
		return got, nil
	}
	cases := make([]reflect.SelectCase, 0, len(chs)+1)
	for _, ch := range chs {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	i, _, _ := reflect.Select(cases)
	if i == len(chs) {
		return -1, ctx.Err()
	}
	return i, nil
}

// isClosed reports whether ch is closed (a nil channel never is).
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// recv waits for a value on ch (or its closing) or for ctx to end; in a
// simulation the actor waits as an actor.
func recv[T any](ctx context.Context, ch <-chan T) (T, bool, error) {
	if rt := sim.Of(ctx); rt != nil {
		var v T
		var ok bool
		try := func() bool {
			select {
			case v, ok = <-ch:
				return true
			default:
				return false
			}
		}
		if try() {
			return v, ok, nil
		}
		if err := rt.Block(ctx, try); err != nil {
			return v, false, err
		}
		return v, ok, nil
	}
	select {
	case v, ok := <-ch:
		return v, ok, nil
	case <-ctx.Done():
		var zero T
		return zero, false, ctx.Err()
	}
}

// bounded bounds ctx by d of real time, for an operation that must not
// hold a run on a frozen server; in a simulation, by d of simulated time
// (the host's time must not reach the story).
func bounded(ctx context.Context, env *Env, d time.Duration) (context.Context, context.CancelFunc) {
	if c := env.Clock(); c.Simulated() {
		return c.WithTimeout(ctx, d)
	}
	return context.WithTimeout(ctx, d)
}

// sleepOrRecv sleeps d of w's time, or less if ch yields a value (or is
// closed) first.
func sleepOrRecv[T any](ctx context.Context, w *Worker, d time.Duration, ch <-chan T) error {
	c := w.env.Clock()
	if c.Simulated() {
		tctx, stop := c.WithTimeout(ctx, d)
		defer stop()
		_, _, err := recv(tctx, ch)
		if err != nil && ctx.Err() == nil && clock.TimedOut(tctx) {
			return nil // slept the whole time
		}
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Sleep(wctx, d) }()
	select {
	case <-ch:
		stop()
		<-done
		return ctx.Err()
	case err := <-done:
		return err
	}
}
