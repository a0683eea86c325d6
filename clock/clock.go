// Package clock is the one clock of a run: virtual time at a speed that may
// change mid-run (the embedded store), or real time scaled by a fixed factor
// (a real server). Every duration of a run goes through it. A clock may be
// driven by a scheduler instead (a simulated run): then its time is the
// scheduler's and advances only when no actor of the run can go on.
package clock

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Speed limits for a virtual clock. Zero means paused. At MinSpeed 50 µs
// of the run last a second: a race of a few hundred microseconds (fifty
// Lua scripts in a row) can be watched.
const (
	MinSpeed = 0.00005
	MaxSpeed = 10.0
)

// ErrFixedSpeed is returned by SetSpeed on a clock whose speed cannot change
// (a real Redis server keeps its own time).
var ErrFixedSpeed = errors.New("clock: the speed of a real Redis server's clock cannot change mid-run")

// Clock is the one clock of a run. Every duration in a run (work, TTL,
// backoff, pauses) goes through it.
//
// A virtual clock (embedded store) runs at a speed that may change mid-run;
// speed 0 means paused. The embedded Redis's time follows it, so pausing
// freezes the workers and the TTLs alike.
//
// A scaled clock (real Redis) runs at the fixed speed 1/slowmo: every duration
// sent to the server is multiplied by slowmo, and so is every sleep.
type Clock struct {
	mu     sync.Mutex // serialises speed changes
	state  atomic.Pointer[clockState]
	fixed  bool
	scale  float64 // server duration = virtual duration × scale
	origin time.Time
	// sched, when set, drives the clock: a simulated run. Its time is
	// the clock's; the speed then only paces how fast it may advance.
	sched atomic.Pointer[schedRef]
}

type schedRef struct{ s Scheduler }

// scheduler is the scheduler that drives the clock, or nil.
func (c *Clock) scheduler() Scheduler {
	if r := c.sched.Load(); r != nil {
		return r.s
	}
	return nil
}

type clockState struct {
	anchorReal time.Time     // real instant (monotonic) of the last speed change
	anchorVirt time.Duration // virtual time at anchorReal
	speed      float64
	changed    chan struct{} // closed when this state is replaced
}

func (s *clockState) now() time.Duration {
	if s.speed == 0 {
		return s.anchorVirt
	}
	return s.anchorVirt + time.Duration(float64(time.Since(s.anchorReal))*s.speed)
}

// NewClock returns a virtual clock starting at zero and running at speed
// (0 = paused).
func NewClock(speed float64) *Clock {
	c := &Clock{scale: 1, origin: time.Now()}
	c.state.Store(&clockState{anchorReal: c.origin, speed: clampSpeed(speed), changed: make(chan struct{})})
	return c
}

// NewScaledClock returns the fixed-speed clock used with a real Redis server:
// slowmo 4 makes every duration, sent or slept, four times longer.
func NewScaledClock(slowmo float64) *Clock {
	if slowmo <= 0 || math.IsNaN(slowmo) || math.IsInf(slowmo, 0) {
		slowmo = 1
	}
	c := &Clock{fixed: true, scale: slowmo, origin: time.Now()}
	c.state.Store(&clockState{anchorReal: c.origin, speed: 1 / slowmo, changed: make(chan struct{})})
	return c
}

func clampSpeed(s float64) float64 {
	switch {
	case s <= 0 || math.IsNaN(s):
		return 0
	case s < MinSpeed:
		return MinSpeed
	case s > MaxSpeed:
		return MaxSpeed
	}
	return s
}

// Now is the virtual time elapsed since the run started.
func (c *Clock) Now() time.Duration {
	if s := c.scheduler(); s != nil {
		return s.Now()
	}
	return c.state.Load().now()
}

// PaceNow is where the speed alone would have brought the clock by now: a
// simulated run's time may not pass it.
func (c *Clock) PaceNow() time.Duration { return c.state.Load().now() }

// StartAt moves a fresh clock's zero to t.
func (c *Clock) StartAt(t time.Time) {
	c.origin = t
	c.state.Store(&clockState{anchorReal: t, speed: c.state.Load().speed, changed: make(chan struct{})})
}

// Origin is the real instant the clock started.
func (c *Clock) Origin() time.Time { return c.origin }

// Speed is the current speed: virtual seconds per real second. 0 is paused.
func (c *Clock) Speed() float64 { return c.state.Load().speed }

// Paused reports whether the clock stands still.
func (c *Clock) Paused() bool { return c.Speed() == 0 }

// Fixed reports whether the speed is fixed (a real Redis server).
func (c *Clock) Fixed() bool { return c.fixed }

// Slowmo is the factor between virtual durations and durations sent to the
// server: 1 on the embedded store.
func (c *Clock) Slowmo() float64 { return c.scale }

// SetSpeed changes the speed from now on; sleeps in progress take it into
// account at once. 0 pauses; other values are clamped to [MinSpeed, MaxSpeed].
func (c *Clock) SetSpeed(speed float64) error {
	if c.fixed {
		return ErrFixedSpeed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.state.Load()
	speed = clampSpeed(speed)
	if speed == old.speed {
		return nil
	}
	at := old.now()
	if c.scheduler() != nil {
		// A simulation that fell behind its pace goes on from where it
		// is, not from where the pace had got to.
		at = min(at, c.scheduler().Now())
	}
	c.state.Store(&clockState{anchorReal: time.Now(), anchorVirt: at, speed: speed, changed: make(chan struct{})})
	close(old.changed)
	return nil
}

// Changed returns a channel closed at the next speed change.
func (c *Clock) Changed() <-chan struct{} { return c.state.Load().changed }

// ToServer converts a virtual duration into the duration to send to Redis.
func (c *Clock) ToServer(d time.Duration) time.Duration {
	if c.scale == 1 {
		return d
	}
	return time.Duration(float64(d) * c.scale)
}

// FromServer converts a duration reported by Redis (PTTL) into virtual time.
func (c *Clock) FromServer(d time.Duration) time.Duration {
	if c.scale == 1 {
		return d
	}
	return time.Duration(float64(d) / c.scale)
}

// Real is how much real time a virtual duration takes at the current speed;
// while paused it is d itself, a bound for timeouts rather than a promise.
func (c *Clock) Real(d time.Duration) time.Duration {
	s := c.Speed()
	if s == 0 {
		return d
	}
	return time.Duration(float64(d) / s)
}

// Sleep waits until d of virtual time has passed, following any speed change
// or pause that happens during the sleep. It returns ctx.Err() if ctx ends
// first.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return c.SleepUntil(ctx, c.Now()+d)
}

// SleepUntil waits until the virtual time reaches t, and then while ctx's
// gate holds its actor (a paused worker wakes only once it runs again).
func (c *Clock) SleepUntil(ctx context.Context, t time.Duration) error {
	if err := c.sleepUntil(ctx, t); err != nil {
		return err
	}
	return PassGate(ctx)
}

func (c *Clock) sleepUntil(ctx context.Context, t time.Duration) error {
	if s := c.scheduler(); s != nil {
		return s.SleepUntil(ctx, t)
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		st := c.state.Load()
		rem := t - st.now()
		if rem <= 0 {
			return ctx.Err()
		}
		if st.speed == 0 {
			select {
			case <-st.changed:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		wait := time.Duration(float64(rem) / st.speed)
		if wait <= 0 {
			wait = 1
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-st.changed:
			timer.Stop()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
