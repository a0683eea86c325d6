package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store"
)

// Config says what to run.
type Config struct {
	Scenario string
	Strategy string
	Params   event.Params
	Seed     uint64
	Tool     string    // tool name and version for the log header
	Events   io.Writer // if set, the event log is streamed here as JSONL
	// Realtime runs on the embedded store in real time, goroutines
	// scheduled by Go, instead of the default deterministic simulation.
	Realtime bool
	// Paced reveals a simulated run no faster than the clock's speed (a
	// view that shows it as it happens); unpaced, it runs as fast as the
	// machine can.
	Paced bool
	// Faults are injected at their instants of the run's time: with the
	// seed and the hand-chosen steps, a simulated run's whole schedule.
	Faults []Timed
	// Steps chosen by hand, in order: a simulated run takes them at their
	// step; an actor a step names that cannot go then ends the run.
	Steps []Step
	// Steer, when set, is asked at each other step of a simulated run who
	// goes (the scheduler mode of the view); what it picks joins Hand.
	Steer sim.Steer
	// Branchable keeps the scheduler's step of each event, so that a
	// branch can start from any of them (see Run.StepAt).
	Branchable bool
}

// Run is one running (or finished) scenario. Its event log is the only
// thing that carries state from the workers to whoever watches.
type Run struct {
	Header  event.Header
	Log     *event.Log
	store   *store.Store
	events  io.Writer
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	holders holders
	env     *Env
	bg      *clock.Group // injected pauses still running
	rt      *sim.Runtime // the simulation, when the run is one
	// guest runs only the workers of a race another process hosts: no
	// setup, no final reading, no verdict.
	guest func(ctx context.Context, env *Env) error
	// outside runs a race whose workers come from outside, one per call.
	outside func(ctx context.Context, env *Env) error
	stuck   atomic.Pointer[error] // why the simulation had to end the run
	hand    hand                  // the steps chosen by hand
	lag     *lagWatch             // a real-time run's: steps the machine held up

	planned []Timed // the faults Config planned
	// pressed are the faults injected during a simulated run, where they
	// landed.
	pressed   []Timed
	pressedMu sync.Mutex
	nets      netFaults // the network faults in force
}

// Start validates cfg and starts the run on st. The caller owns st and
// closes it after the run is done.
func Start(ctx context.Context, st *store.Store, cfg Config) (*Run, error) {
	nameScripts()
	return start(ctx, st, cfg, runMode{})
}

// runMode says how a run shares its race with other processes.
type runMode struct {
	lanes  []string                        // the workers' names, when not w00…
	hosted func(ctx context.Context) error // the workers race elsewhere: this waits for them
	guest  bool                            // only the workers race here
	// A guest's workers are lanes first… of the total of its host's race.
	first int32
	total int
	// outside, when set, is the whole run: its workers come from outside
	// the process one at a time (see Open); only the checker derives.
	outside func(ctx context.Context, env *Env) error
}

func start(ctx context.Context, st *store.Store, cfg Config, mode runMode) (*Run, error) {
	sc, err := Lookup(cfg.Scenario)
	if err != nil {
		return nil, err
	}
	if !sc.Supports(cfg.Strategy) {
		return nil, &event.ParamError{Param: "lock", Msg: fmt.Sprintf("%q is not a strategy of %s: want one of %s", cfg.Strategy, sc.Name, sc.StrategyNames())}
	}
	if err := sc.Refuses(cfg.Strategy, cfg.Params); err != nil {
		return nil, err
	}
	if sc.Cast > 0 {
		cfg.Params.Workers = sc.Cast
		if sc.castFor != nil {
			cfg.Params.Workers = sc.castFor(cfg.Strategy, cfg.Params)
		}
	}
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	if err := checkServers(st, cfg.Strategy); err != nil {
		return nil, err
	}
	h := sc.header(st, cfg, mode)
	rt, why := simulation(st, sc, cfg, mode)
	h.Time = why
	if rt == nil && (len(cfg.Steps) > 0 || cfg.Steer != nil) {
		return nil, fmt.Errorf("steps chosen by hand need a simulated run; this one keeps %s", why)
	}
	ctx, cancel := context.WithCancel(ctx)
	if rt != nil {
		ctx, cancel = st.Clock().WithCancel(sim.Within(ctx, rt))
	}
	var derive event.Deriver
	switch {
	case mode.outside != nil: // the story's beats are about its own cast
		derive = &chain{check: check.NewChecker(), tell: &narrator{}}
	case !mode.guest:
		derive = sc.deriverOn(cfg.Strategy, cfg.Params, st.Servers())
	}
	if c, ok := derive.(*chain); ok {
		c.check.Names = h.Lanes // the violations name the lanes as they are shown
	}
	r := &Run{Header: h, Log: event.NewLog(st.Clock(), derive), store: st, events: cfg.Events,
		cancel: cancel, done: make(chan struct{}), bg: clock.NewGroup(st.Clock()), rt: rt}
	if rt != nil && (len(cfg.Steps) > 0 || cfg.Steer != nil || cfg.Branchable) {
		r.Log.SetStepper(rt.Steps)
	}
	env := &Env{run: r, ctx: ctx, Store: st, serial: clock.NewMutex(st.Clock()), order: clock.NewMutex(st.Clock()), Params: cfg.Params, Strategy: cfg.Strategy, Seed: cfg.Seed,
		workers: make([]*Worker, cfg.Params.Workers), hosted: mode.hosted, guest: mode.guest, first: mode.first, total: mode.total}
	if mode.guest {
		r.guest = guestRun(sc.Name)
	}
	r.outside = mode.outside
	r.env = env
	if rt == nil && !mode.guest && mode.outside == nil {
		// Only the embedded Redis answers in microseconds: an etcd
		// election waits by design for the lease before it to lapse.
		r.lag = newLagWatch(cfg.Params.TTL.D(), st.Kind() == store.Embedded && ServerOf(cfg.Strategy) == "redis", st.Clock().Speed)
		r.lag.simulable = why == timeAsked
	}
	r.launch(ctx, sc, env, cfg, cancel)
	return r, nil
}

// header is the header of a run of sc by cfg on st: what the run is, its
// lanes and its locks' traits.
func (sc *Scenario) header(st *store.Store, cfg Config, mode runMode) event.Header {
	h := event.Header{Format: event.Format, Version: event.Version, Scenario: sc.Name, Strategy: cfg.Strategy,
		Params: cfg.Params, Seed: cfg.Seed, Store: st.Describe(), Tool: cfg.Tool,
		StartedAt: time.Now().UTC().Truncate(time.Second), Lanes: make([]string, cfg.Params.Workers)}
	if st.Clock().Fixed() && st.Clock().Slowmo() != 1 {
		h.Slowmo = st.Clock().Slowmo()
	}
	for i := range h.Lanes {
		h.Lanes[i] = check.WorkerName(int32(i))
	}
	copy(h.Lanes, mode.lanes)
	h.Traits, h.KeyTraits = lockTraits(sc, cfg.Strategy)
	return h
}

// launch starts the run: its faults at their times and its main, on the
// simulation's scheduler when it has one.
func (r *Run) launch(ctx context.Context, sc *Scenario, env *Env, cfg Config, cancel context.CancelFunc) {
	rt, st := r.rt, r.store
	r.planned = slices.Clone(cfg.Faults)
	st.SeedLinks(cfg.Seed)
	if rt != nil {
		rt.OnStuck(func(err error) {
			r.stuck.Store(&err)
			cancel()
		})
		if len(cfg.Steps) > 0 || cfg.Steer != nil {
			r.hand.plan = slices.Clone(cfg.Steps)
			rt.SteerWith(r.steerer(cfg.Steer))
		}
		for _, f := range cfg.Faults {
			if f.Pressed != nil {
				rt.DoAt(*f.Pressed, f.At, func() { r.scheduled(f) })
				continue
			}
			rt.AfterFunc(f.At, func() { r.scheduled(f) })
		}
		rt.Start(ctx, "main", func(ctx context.Context) { r.main(ctx, sc, env) })
		return
	}
	for _, f := range cfg.Faults {
		if f.At <= 0 && f.Kind == FaultNet {
			// A network fault due at the start is in place before the
			// first worker moves, not whenever a goroutine gets to it.
			// (Adding it only marks links; a crash or pause needs its
			// worker started, a failover can take seconds.)
			r.scheduled(f)
			continue
		}
		go func() {
			if st.Clock().SleepUntil(ctx, f.At) == nil {
				r.scheduled(f)
			}
		}()
	}
	go r.main(ctx, sc, env)
}

func (r *Run) main(ctx context.Context, sc *Scenario, env *Env) {
	defer close(r.done)
	defer r.cancel()
	var rec *recorder
	if r.events != nil {
		w, err := check.NewWriter(r.events, r.Header)
		if err != nil {
			r.err = fmt.Errorf("event log: %w", err)
			return
		}
		rec = startRecorder(r.Log, w)
	}
	var err error
	switch {
	case r.guest != nil:
		err = r.guest(ctx, env)
	case r.outside != nil:
		err = r.outside(ctx, env)
	default:
		env.announceServers()
		err = sc.run(ctx, env)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = fmt.Errorf("run stopped: %w", err)
	}
	if err == nil {
		if uerr := r.unplanned(); uerr != nil {
			r.halt(uerr)
		}
	}
	if p := r.stuck.Load(); p != nil {
		err = *p
	}
	var stepErr *StepError
	switch {
	case errors.As(err, &stepErr):
		// A schedule's step that could not be taken: the run is not the
		// schedule's, so it has no verdict.
	case r.guest != nil:
		// A guest's verdict is its host's: the host folds these events
		// with everyone else's.
	case err == nil:
		s := Summarize(r.Header, r.Log)
		env.Emit(event.Event{Kind: event.KindBeat, Code: BeatVerdict, Msg: s.Verdict + ". " + s.Detail})
		err = serverFailure(s)
	case !errors.Is(err, context.Canceled):
		// The run could not go on (its setup, or its final read, failed):
		// the log says so, so no view can take it for a verdict on locking.
		o := outcomeOf(err)
		if o == event.OutcomeOK {
			o = event.OutcomeFailed
		}
		env.Emit(event.Event{Kind: event.KindError, Code: "run", Outcome: o, Msg: serverMessage(err)})
		err = serverFailure(Summarize(r.Header, r.Log))
	}
	r.cancel()
	r.bg.Wait(ctx)
	r.err = err
	if rec != nil {
		if werr := rec.stop(Summarize(r.Header, r.Log)); werr != nil && r.err == nil {
			r.err = fmt.Errorf("event log: %w", werr)
		}
	}
}

// Done is closed when the run has ended and its event log is written.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to end and returns its error, if any.
func (r *Run) Wait() error { <-r.done; return r.err }

// Stop ends the run early.
func (r *Run) Stop() { r.cancel() }

// Summary folds the events so far into a summary.
func (r *Run) Summary() *check.Summary { return Summarize(r.Header, r.Log) }

// recorder streams a log to a Writer, off the workers' path.
type recorder struct {
	log  *event.Log
	w    *check.Writer
	quit chan struct{}
	done chan error
}

func startRecorder(l *event.Log, w *check.Writer) *recorder {
	r := &recorder{log: l, w: w, quit: make(chan struct{}), done: make(chan error, 1)}
	go r.loop()
	return r
}

func (r *recorder) loop() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var buf []event.Event
	cursor := 0
	for {
		select {
		case <-t.C:
			buf, cursor = r.log.Read(cursor, buf[:0])
			if err := r.w.Write(buf); err != nil {
				r.done <- err
				return
			}
		case <-r.quit:
			buf, _ = r.log.Read(cursor, buf[:0])
			r.done <- r.w.Write(buf)
			return
		}
	}
}

func (r *recorder) stop(s *check.Summary) error {
	close(r.quit)
	err := <-r.done
	return errors.Join(err, r.w.Close(s))
}

// Env is what a scenario's code sees of its run.
type Env struct {
	run      *Run
	ctx      context.Context
	mu       sync.Mutex
	workers  []*Worker         // by ID, as they are made
	servers  map[string]string // each spawned server's last announced line
	Store    *store.Store
	Params   event.Params
	Strategy string
	Seed     uint64
	// serial orders the single operations of lock-free strategies with
	// their events, so the log's order is the server's.
	serial *clock.Mutex
	// hosted, when set, stands in for the workers: they race in other
	// processes, and it returns when they are done.
	hosted func(ctx context.Context) error
	// guest: the workers here are lanes first… of a race of total lanes
	// that another process hosts.
	guest bool
	first int32
	total int
	// What a guest's workers share in one process: the deliveries that
	// arrive together (webhook), the log's order of reservations (queue).
	payment delivery
	order   *clock.Mutex
	ring    *arrivals // deadlock: the workers here that hold their own resource
}

// Lane is w's lane in the whole race: its ID, offset by the lanes of
// other processes when this is a guest's run.
func (e *Env) Lane(w *Worker) int32 { return e.first + w.ID }

// Lanes is how many workers race in all, here and in other processes.
func (e *Env) Lanes() int {
	if e.total > 0 {
		return e.total
	}
	return e.Params.Workers
}

// Emit appends a system event.
func (e *Env) Emit(ev event.Event) {
	ev.Worker = event.System
	e.run.Log.Emit(ev)
}

// Clock is the run's clock.
func (e *Env) Clock() *store.Clock { return e.Store.Clock() }

// Workers runs f on n worker goroutines that start together, and waits for
// all of them.
func (e *Env) Workers(ctx context.Context, n int, f func(ctx context.Context, w *Worker)) error {
	if e.hosted != nil {
		return e.hosted(ctx)
	}
	ws := make([]*Worker, n)
	for i := range ws {
		w, err := e.lockedWorker(int32(i))
		if err != nil {
			return err
		}
		ws[i] = w
	}
	if e.Clock().Simulated() {
		g := clock.NewGroup(e.Clock())
		for _, w := range ws {
			g.Go(w.ctx, check.WorkerName(w.ID), func(ctx context.Context) {
				w.ctx = ctx
				f(ctx, w)
			})
		}
		g.Wait(ctx)
		return ctx.Err()
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(w.ctx, w)
		}()
	}
	close(start)
	wg.Wait()
	return ctx.Err()
}

// lockedWorker makes worker i with its lock, when the strategy is one.
func (e *Env) lockedWorker(i int32) (*Worker, error) {
	w := e.worker(i)
	if isLock(e.Strategy) {
		l, err := e.NewLock(w, e.Strategy, e.Params.RetryPolicy(), nil)
		if err != nil {
			return nil, err
		}
		w.Lock = l
	}
	return w, nil
}

// isLock reports whether the strategy is a lock this program registered
// (not "atomic", not idempotency keys).
func isLock(strategy string) bool {
	_, ok := lock.Lookup(strategy)
	return ok
}

// worker makes worker i (without a lock or a goroutine).
func (e *Env) worker(i int32) *Worker {
	w := &Worker{ID: i, env: e, Rand: mrand.New(mrand.NewPCG(e.Seed, uint64(i)+1))}
	// A paused worker stops at its next command to the store, whoever in
	// it sends one (its lock's votes and renewals too), as a stopped
	// process does.
	w.ctx, w.cancel = e.Clock().WithCancelCause(clock.WithGate(store.WithWorker(e.ctx, i), w.hold))
	e.mu.Lock()
	if int(i) < len(e.workers) {
		e.workers[i] = w
	}
	e.mu.Unlock()
	return w
}

// Worker is one goroutine of a run.
type Worker struct {
	ID   int32
	Rand *mrand.Rand
	Lock lock.Locker // nil for lock-free strategies
	env  *Env

	ctx     context.Context // ends when the run does, or when w crashes
	cancel  context.CancelCauseFunc
	crashed atomic.Bool
	done    atomic.Bool

	mu         sync.Mutex
	resumed    chan struct{} // non-nil while paused
	paused     time.Duration // total of the pauses that have ended
	lastResume time.Duration // when the last pause ended

	tap func(event.Event) // sees each of w's events after it is logged (outside workers)
}

// Emit appends an event of this worker.
func (w *Worker) Emit(ev event.Event) {
	if w.crashed.Load() {
		return // a dead process says nothing more
	}
	ev.Worker = w.ID
	w.env.run.Log.Emit(ev)
	if w.tap != nil {
		w.tap(ev)
	}
	if lag := w.env.run.lag; lag != nil && ev.Has&event.HasCall != 0 && !w.pausedSince(ev.Call) {
		if b, ok := lag.answer(&ev, w.env.Clock().Now()); ok {
			w.env.Emit(b)
		}
	}
}

// Done records the worker's outcome: ok, or a failure code and message.
func (w *Worker) Done(ok bool, code, msg string) {
	w.done.Store(true)
	w.Emit(event.Event{Kind: event.KindDone, Code: code, Msg: msg}.WithOK(ok))
}

var stepKinds = [...]event.Kind{
	lock.StepAttempt: event.KindAttempt, lock.StepAcquired: event.KindAcquired, lock.StepDenied: event.KindDenied,
	lock.StepBackoff: event.KindBackoff, lock.StepVote: event.KindVote, lock.StepRenewed: event.KindRenewed,
	lock.StepRenewFailed: event.KindRenewFailed, lock.StepLockLost: event.KindLockLost,
	lock.StepRelease: event.KindRelease, lock.StepReleaseFailed: event.KindReleaseFailed, lock.StepError: event.KindError,
}

// answers are the steps that are a server's answer to a command the lock
// sent at the step's Call.
var answers = [...]bool{lock.StepAcquired: true, lock.StepDenied: true, lock.StepVote: true,
	lock.StepRenewed: true, lock.StepRelease: true, lock.StepReleaseFailed: true, lock.StepError: true}

var stepOutcomes = [...]event.Outcome{lock.OK: event.OutcomeOK, lock.Failed: event.OutcomeFailed, lock.Indeterminate: event.OutcomeIndeterminate, lock.GaveUp: event.OutcomeGaveUp}

// observe turns a lock step into an event.
func (w *Worker) observe(s lock.Step) {
	if int(s.Kind) >= len(stepKinds) {
		return
	}
	e := event.Event{Kind: stepKinds[s.Kind], Res: w.env.Store.Name(s.Key), Token: s.Token, Msg: s.Msg}
	if s.Fence != 0 {
		e = e.WithFence(s.Fence)
	}
	if s.TTL != 0 {
		e.TTL, e.Has = s.TTL, e.Has|event.HasTTL
	}
	if s.Delay != 0 {
		e.Delay, e.Has = s.Delay.Truncate(time.Microsecond), e.Has|event.HasDelay
	}
	if s.Node >= 0 {
		e.Node, e.Has = int16(s.Node), e.Has|event.HasNode
	}
	if s.Attempt != 0 {
		e.Attempt, e.Has = int32(s.Attempt), e.Has|event.HasAttempt
	}
	if s.Kind == lock.StepVote || s.Kind == lock.StepRelease || s.Kind == lock.StepReleaseFailed {
		e = e.WithOK(s.OK)
	}
	if answers[s.Kind] || s.Op != "" {
		e = e.WithCall(s.Call)
	}
	if int(s.Outcome) < len(stepOutcomes) {
		e.Outcome = stepOutcomes[s.Outcome]
	}
	if s.Kind == lock.StepError || s.Op == lock.OpUndo {
		e.Code = s.Op // an undo's releases say so: they free votes, not a held lock
	}
	if s.Kind == lock.StepAcquired && s.Token != "" {
		w.env.run.holders.set(s.Token, w.ID)
	}
	w.Emit(e)
}

// ServerError says a server failed the run: it refused operations, or left
// them unanswered. The run's verdict is then about the server, not locking.
type ServerError struct {
	Failed, Unanswered int
	Msg                string // the server's own words (the first refusal, else the first silence)
}

func (e *ServerError) Error() string {
	if e.Failed > 0 {
		return fmt.Sprintf("the server refused %d operation(s): %s", e.Failed, e.Msg)
	}
	return fmt.Sprintf("the server left %d operation(s) unanswered (%s): whether they happened is unknown", e.Unanswered, e.Msg)
}

// serverFailure is the run's error when a server failed it, else nil.
func serverFailure(s *check.Summary) error {
	switch {
	case s.FailedOps > 0:
		return &ServerError{Failed: s.FailedOps, Unanswered: s.UnansweredOps, Msg: s.ServerError}
	case s.UnansweredOps > 0:
		return &ServerError{Unanswered: s.UnansweredOps, Msg: s.UnansweredError}
	}
	return nil
}
