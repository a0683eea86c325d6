package clock

import (
	"context"
	"sync"
	"time"
)

// Scheduler drives a simulated run: its actors (goroutines it knows) run
// one at a time, and its time advances only when none of them can go on.
// Every way an actor waits goes through it, so that it always knows who
// can run.
type Scheduler interface {
	// Now is the simulated time.
	Now() time.Duration
	// SleepUntil parks the calling actor until the time is t or ctx ends.
	SleepUntil(ctx context.Context, t time.Duration) error
	// Block parks the calling actor until ready reports true or ctx
	// ends. ready is called by the scheduler, with no actor running.
	Block(ctx context.Context, ready func() bool) error
	// Go starts f as a new actor, with a context that names it.
	Go(ctx context.Context, name string, f func(ctx context.Context))
	// AfterFunc calls f, with no actor running, once d has passed.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Poke says that a context an actor may wait on has ended.
	Poke()
}

// Simulate hands the clock to s: from now on its time is s's. It is
// called before the run starts.
func (c *Clock) Simulate(s Scheduler) { c.sched.Store(&schedRef{s}) }

// Simulated reports whether a scheduler drives the clock.
func (c *Clock) Simulated() bool { return c.scheduler() != nil }

// Go runs f on a goroutine of the run: in a simulation, a new actor.
func (c *Clock) Go(ctx context.Context, name string, f func(ctx context.Context)) {
	if c.scheduler() != nil {
		c.scheduler().Go(ctx, name, f)
		return
	}
	go f(ctx)
}

// WithCancel is context.WithCancel whose cancel a simulation notices at
// once (an actor asleep on the context wakes).
func (c *Clock) WithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if c.scheduler() == nil {
		return ctx, cancel
	}
	return ctx, func() { cancel(); c.scheduler().Poke() }
}

// WithCancelCause is context.WithCancelCause, noticed as WithCancel's.
func (c *Clock) WithCancelCause(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	if c.scheduler() == nil {
		return ctx, cancel
	}
	return ctx, func(err error) { cancel(err); c.scheduler().Poke() }
}

// WithTimeout bounds ctx by d of the clock's time: real time scaled by the
// speed, or a simulation's time. A simulated timeout's cause is
// context.DeadlineExceeded.
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if c.scheduler() == nil {
		return context.WithTimeout(ctx, c.Real(d))
	}
	return TimeoutOn(c.scheduler(), ctx, d)
}

// TimeoutOn bounds ctx by d of s's time: its cause is
// context.DeadlineExceeded when d passes first.
func TimeoutOn(s Scheduler, ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := s.AfterFunc(max(d, 0), func() { cancel(context.DeadlineExceeded); s.Poke() })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// TimedOut reports whether ctx ended by a timeout, real or simulated.
func TimedOut(ctx context.Context) bool {
	return ctx.Err() == context.DeadlineExceeded || context.Cause(ctx) == context.DeadlineExceeded
}

// Recv waits for a value from ch, or for ctx to end.
func Recv[T any](c *Clock, ctx context.Context, ch <-chan T) (T, error) {
	if c.scheduler() == nil {
		select {
		case v := <-ch:
			return v, nil
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
	var v T
	try := func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	}
	if try() {
		return v, nil
	}
	if err := c.scheduler().Block(ctx, try); err != nil {
		return v, err
	}
	return v, nil
}

// Group runs goroutines of the run and waits for them, as a
// sync.WaitGroup does, in real time or in a simulation.
type Group struct {
	c  *Clock
	mu sync.Mutex
	n  int
	wg sync.WaitGroup
}

// NewGroup returns a group on c.
func NewGroup(c *Clock) *Group { return &Group{c: c} }

// Go runs f in the group.
func (g *Group) Go(ctx context.Context, name string, f func(ctx context.Context)) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	g.wg.Add(1)
	g.c.Go(ctx, name, func(ctx context.Context) {
		defer func() {
			g.mu.Lock()
			g.n--
			g.mu.Unlock()
			g.wg.Done()
		}()
		f(ctx)
	})
}

// Wait waits for every goroutine of the group to end. ctx only says, in
// a simulation, which actor waits: it does not cut the wait short.
func (g *Group) Wait(ctx context.Context) {
	if g.c.scheduler() == nil {
		g.wg.Wait()
		return
	}
	idle := func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.n == 0
	}
	for !idle() {
		_ = g.c.scheduler().Block(context.WithoutCancel(ctx), idle)
	}
}

// Mutex is a mutual exclusion lock that may be held across the run's
// waits (a command sent to a server): in a simulation, an actor that finds
// it held waits as an actor, so that the holder can go on.
type Mutex struct {
	c      *Clock
	mu     sync.Mutex
	locked bool
	real   sync.Mutex
}

// NewMutex returns an unlocked mutex on c.
func NewMutex(c *Clock) *Mutex { return &Mutex{c: c} }

// Lock takes m; ctx only names, in a simulation, the actor that waits.
func (m *Mutex) Lock(ctx context.Context) {
	if m.c.scheduler() == nil {
		m.real.Lock()
		return
	}
	free := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return !m.locked
	}
	for {
		m.mu.Lock()
		if !m.locked {
			m.locked = true
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		_ = m.c.scheduler().Block(context.WithoutCancel(ctx), free)
	}
}

// Unlock lets m go.
func (m *Mutex) Unlock() {
	if m.c.scheduler() == nil {
		m.real.Unlock()
		return
	}
	m.mu.Lock()
	m.locked = false
	m.mu.Unlock()
}
