// Package sim is a deterministic simulation of a run: a scheduler that lets
// exactly one of the run's actors (its workers, renewal loops, fault timers)
// go at a time, picks the next with a PRNG seeded by the run's seed, and
// moves simulated time to the earliest timer only when no actor can go on.
// Nothing the host does — how busy it is, how Go schedules goroutines —
// reaches the order of steps: the same seed gives the same history.
//
// An actor yields at each point where it would wait: before each command
// it sends to a server, at each sleep or deadline of the run's clock, and
// when it waits for another actor (clock.Recv, clock.Group, clock.Mutex).
package sim

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/clock"
)

// Runtime schedules one run's actors. Make it with New; start it with
// Start.
type Runtime struct {
	mu       sync.Mutex
	rng      *rand.Rand
	lat      *rand.Rand // the network's latencies
	now      atomic.Int64
	pace     *clock.Clock // nil: time jumps at once (headless)
	live     int
	nextID   int
	runnable []*actor
	waiters  []*actor
	timers   timers
	seq      uint64
	dirty    bool
	running  *actor
	chosen   *actor // who goes once the driver has the turn back
	inbox    []func()
	planned  []planned // inputs to land again where they landed (DoAt)
	kick     chan struct{}
	steps    atomic.Uint64
	fired    atomic.Uint64 // times fire moved time on
	started  bool
	finished chan struct{}
	err      error
	onStuck  func(error)
	steer    Steer // who goes, when a hand or a plan decides
	steering atomic.Bool
	asked    uint64   // the step steer was last asked about
	all      []*actor // every actor, when steered (to say why one cannot go)
}

type state uint8

const (
	ready state = iota
	sleeping
	waiting
	exited
)

type actor struct {
	id    int
	name  string
	ctx   context.Context
	next  func() (struct{}, bool) // runs the actor until it parks or ends
	yield func(struct{}) bool     // parks it: the turn goes back to the driver
	state state
	wait  context.Context // what a sleeping or waiting actor's wait ends with
	ready func() bool
	timer *timer
	up    *actor // the actor that started it, if one did
	trip  string // on its way to a server: the command it sends
}

type key struct{}

// New returns a runtime seeded by seed. pace, when set, is the clock whose
// speed the simulated time may not outrun (a view that shows the run as
// it happens); without it, time jumps from one timer to the next at once.
func New(seed uint64, pace *clock.Clock) *Runtime {
	return &Runtime{
		rng:      rand.New(rand.NewPCG(seed, 0x73696d)),
		lat:      rand.New(rand.NewPCG(seed, 0x6c6174)),
		pace:     pace,
		kick:     make(chan struct{}, 1),
		finished: make(chan struct{}),
	}
}

// OnStuck sets what the runtime calls when no actor can ever go on again
// though some have not ended: it should end the run (cancel its context),
// which wakes them.
func (rt *Runtime) OnStuck(f func(error)) { rt.onStuck = f }

// Now is the simulated time.
func (rt *Runtime) Now() time.Duration { return time.Duration(rt.now.Load()) }

// Steps is how many times an actor has been let go so far.
func (rt *Runtime) Steps() uint64 { return rt.steps.Load() }

// Done is closed when every actor has ended.
func (rt *Runtime) Done() <-chan struct{} { return rt.finished }

// Err says why the runtime had to end its run, if it did.
func (rt *Runtime) Err() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.err
}

// Start runs f as the first actor and starts scheduling.
func (rt *Runtime) Start(ctx context.Context, name string, f func(ctx context.Context)) {
	rt.Go(ctx, name, f)
	rt.mu.Lock()
	rt.started = true
	rt.mu.Unlock()
	// The run was stopped from outside: its sleepers look at their
	// contexts at the next pick, not once no actor can go on — with
	// thousands of workers contending, that moment may never come. A
	// stopped run's order of steps is no seed's anyway.
	context.AfterFunc(ctx, func() { rt.Poke(); rt.Do(func() {}) })
	go rt.drive()
}

// Go starts f as a new actor. It is called by the running actor, by the
// scheduler (a timer's or an input's function), or before Start.
func (rt *Runtime) Go(ctx context.Context, name string, f func(ctx context.Context)) {
	rt.mu.Lock()
	a := &actor{id: rt.nextID, name: name, up: rt.running}
	rt.nextID++
	if rt.steer != nil {
		rt.all = append(rt.all, a)
	}
	a.ctx = Within(ctx, rt)
	rt.live++
	rt.runnable = append(rt.runnable, a)
	rt.mu.Unlock()
	// Each actor is a coroutine of the driver: passing the turn is a
	// direct switch between two goroutines, which neither wakes another
	// thread of the host nor waits for one.
	a.next, _ = iter.Pull(func(yield func(struct{}) bool) {
		a.yield = yield
		defer rt.exit(a)
		f(a.ctx)
	})
}

// Do runs f at the next point where no actor can go on: an input from
// outside the run (a fault a user pressed). The time it runs at is the
// simulated time then.
func (rt *Runtime) Do(f func()) {
	rt.mu.Lock()
	rt.inbox = append(rt.inbox, f)
	rt.mu.Unlock()
	select {
	case rt.kick <- struct{}{}:
	default:
	}
}

// Poke says a context may have ended: sleeping actors look at theirs.
func (rt *Runtime) Poke() {
	rt.mu.Lock()
	rt.dirty = true
	rt.mu.Unlock()
}

// Within marks ctx as the context of rt's run: whoever uses it (or one
// derived from it) is one of rt's actors.
func Within(ctx context.Context, rt *Runtime) context.Context {
	return context.WithValue(ctx, key{}, rt)
}

// Of is the runtime whose run ctx belongs to, or nil: a caller outside any
// simulation.
func Of(ctx context.Context) *Runtime {
	rt, _ := ctx.Value(key{}).(*Runtime)
	return rt
}

// Acting reports whether a call made with ctx is a step of the
// simulation: ctx belongs to its run and an actor runs now.
func (rt *Runtime) Acting(ctx context.Context) bool { return rt.self(ctx) != nil }

// self is the running actor when ctx belongs to this runtime's run, or
// nil: a caller outside the run (a view, the scheduler's own inputs), or
// no actor runs now. Exactly one actor runs at a time, so a call made with
// the run's context while one runs is that actor's.
func (rt *Runtime) self(ctx context.Context) *actor {
	if Of(ctx) != rt {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.running
}

// park passes the turn on and waits for it to come back.
func (rt *Runtime) park(a *actor) {
	if rt.choose() != a {
		a.yield(struct{}{})
	}
}

// exit ends a: the next actor is chosen before its coroutine returns.
func (rt *Runtime) exit(a *actor) {
	rt.mu.Lock()
	a.state = exited
	rt.live--
	rt.mu.Unlock()
	rt.choose()
}

// Yield lets the scheduler pick who goes next; the caller may go on at once.
func (rt *Runtime) Yield(ctx context.Context) {
	a := rt.self(ctx)
	if a == nil {
		return
	}
	rt.mu.Lock()
	a.state = ready
	rt.runnable = append(rt.runnable, a)
	rt.mu.Unlock()
	rt.park(a)
}

// SleepUntil parks the calling actor until the simulated time is t.
func (rt *Runtime) SleepUntil(ctx context.Context, t time.Duration) error {
	if t <= rt.Now() {
		return ctx.Err()
	}
	a := rt.self(ctx)
	if a == nil {
		return rt.outsider(ctx, t)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rt.mu.Lock()
	a.state, a.wait = sleeping, ctx
	a.timer = rt.push(t, a, nil)
	rt.mu.Unlock()
	rt.park(a)
	return ctx.Err()
}

// outsider waits, for a goroutine that is not an actor, until the
// simulated time is t (or the run ends).
func (rt *Runtime) outsider(ctx context.Context, t time.Duration) error {
	ch := make(chan struct{})
	stop := rt.AfterFunc(t-rt.Now(), func() { close(ch) })
	defer stop()
	select {
	case <-ch:
	case <-rt.finished:
	case <-ctx.Done():
	}
	return ctx.Err()
}

// Block parks the calling actor until ready reports true or ctx ends.
func (rt *Runtime) Block(ctx context.Context, ready func() bool) error {
	a := rt.self(ctx)
	if a == nil {
		return rt.outsiderBlock(ctx, ready)
	}
	if ready() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rt.mu.Lock()
	a.state, a.wait, a.ready = waiting, ctx, ready
	rt.waiters = append(rt.waiters, a)
	rt.mu.Unlock()
	rt.park(a)
	a.ready = nil
	return ctx.Err()
}

func (rt *Runtime) outsiderBlock(ctx context.Context, ready func() bool) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		ok := make(chan bool, 1)
		rt.Do(func() { ok <- ready() })
		select {
		case v := <-ok:
			if v {
				return nil
			}
		case <-rt.finished:
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AfterFunc calls f once d of simulated time has passed, at a point where
// no actor runs. stop cancels it if it has not run.
func (rt *Runtime) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	rt.mu.Lock()
	t := rt.push(rt.Now()+max(d, 0), nil, f)
	rt.mu.Unlock()
	return func() bool {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if t.done {
			return false
		}
		t.done = true
		return true
	}
}

// Latency is a one-way trip between a client and a server on the
// simulated network: tens of microseconds, now and then a few hundred,
// as on loopback.
func (rt *Runtime) Latency() time.Duration {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	us := 30 + rt.lat.ExpFloat64()*25
	return time.Duration(min(us, 400) * float64(time.Microsecond))
}

// stuck describes the actors that wait for what cannot come.
func (rt *Runtime) stuck() error {
	var names []string
	for _, a := range rt.waiters {
		names = append(names, a.name)
	}
	sort.Strings(names)
	if len(names) > 8 {
		names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	return fmt.Errorf("simulation stuck at %v: no actor can go on and no timer is set; still waiting: %s", rt.Now(), strings.Join(names, ", "))
}

var _ clock.Scheduler = (*Runtime)(nil)
