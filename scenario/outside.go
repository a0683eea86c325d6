package scenario

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/reserve_id.lua
	reserveIDLua    string
	reserveIDScript = redis.NewScript(reserveIDLua)
)

// OutsideScenarios are the scenarios whose workers can come from outside
// the process, one per request: oversell (a purchase), webhook (a
// delivery) and queue-double (a run of a job).
var OutsideScenarios = []string{"oversell", "webhook", "queue-double"}

// Errors of an outside run that refuses a worker.
var (
	ErrRunFull  = errors.New("every lane of this round is taken")
	ErrRunEnded = errors.New("this round is over")
)

// Outside is a run whose workers come from outside the process: each Buy,
// Deliver or RunJob is one worker — one lane of the run — doing what a
// worker of the scenario does, under the run's strategy, its events
// appended to the run's one log and folded by its checker. The run lasts
// until Close (its verdict), or until its context ends.
type Outside struct {
	Run   *Run
	env   *Env
	cells lock.Cells

	mu     sync.Mutex
	next   int32
	ended  bool
	made   map[string]bool // the once-only effects announced (init events)
	flight sync.WaitGroup
	quit   chan struct{}
	once   sync.Once

	ready    chan struct{} // closed when the setup is done
	setupErr error
}

// Open makes the scenario's resources on st and starts a run of cfg whose
// workers come from outside; cfg.Params.Workers bounds how many. The
// caller owns st and closes it after the run is done.
func Open(ctx context.Context, st *store.Store, cfg Config) (*Outside, error) {
	sc, err := Lookup(cfg.Scenario)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(OutsideScenarios, sc.Name) {
		return nil, &event.ParamError{Param: "scenario", Msg: fmt.Sprintf("%s cannot take workers from outside: want one of %v", sc.Name, OutsideScenarios)}
	}
	o := &Outside{made: map[string]bool{}, quit: make(chan struct{}), ready: make(chan struct{})}
	r, err := start(ctx, st, cfg, runMode{outside: func(ctx context.Context, env *Env) error { return o.serve(ctx, env, sc.Name) }})
	if err != nil {
		return nil, err
	}
	o.Run = r
	<-o.ready
	if o.setupErr != nil {
		r.Wait()
		return nil, o.setupErr
	}
	return o, nil
}

// serve sets the scenario's resources up, then waits for Close (or the
// end of ctx) and for the workers in flight, and takes the run's last
// reading.
func (o *Outside) serve(ctx context.Context, env *Env, name string) error {
	o.env = env
	if name == "oversell" {
		var err error
		if o.cells, err = env.cellsOf(env.Strategy); err == nil {
			err = env.putStock(ctx, o.cells, env.Params.Stock)
		}
		if err != nil {
			o.setupErr = err
			close(o.ready)
			return err
		}
		env.Emit(event.Event{Kind: event.KindInit, Res: "stock"}.WithStock(env.Params.Stock))
	}
	close(o.ready)
	select {
	case <-o.quit:
	case <-ctx.Done():
	}
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
	o.flight.Wait()
	if name == "oversell" {
		return finalCellStock(ctx, o.env, o.cells, ctx.Err())
	}
	return ctx.Err()
}

// Close ends the run once the workers in flight are done, and waits for
// its verdict. Safe to call more than once.
func (o *Outside) Close() error {
	o.once.Do(func() { close(o.quit) })
	return o.Run.Wait()
}

// Lanes is how many workers the run has had so far.
func (o *Outside) Lanes() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return int(o.next)
}

// Result is what one outside worker did, folded from its own events.
type Result struct {
	Worker       int32
	Success      bool
	LockAcquired bool
	StockBefore  int64 // -1: it read no stock
	StockAfter   int64 // -1: it read no stock
	Code, Msg    string
	// RetryAfter, for a worker denied the lock, is the lock's remaining
	// time to live when it was denied (virtual time).
	RetryAfter time.Duration
	Duration   time.Duration
}

// Lane is the worker's lane name.
func (r *Result) Lane() string { return check.WorkerName(r.Worker) }

// Denied reports whether the worker gave up because the lock (or the
// reservation) was held by another.
func (r *Result) Denied() bool { return !r.Success && r.Code == check.FailLock && !r.LockAcquired }

// Lost reports whether the worker held the lock (or the reservation) and
// lost it to another before it finished: a job redelivered while it ran.
func (r *Result) Lost() bool { return !r.Success && r.Code == check.FailLock && r.LockAcquired }

// tally folds one worker's events into its Result.
type tally struct {
	mu sync.Mutex
	r  Result
}

func (t *tally) add(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case event.KindAcquired:
		t.r.LockAcquired = true
	case event.KindRead:
		if e.Has&event.HasStock != 0 && t.r.StockBefore < 0 {
			t.r.StockBefore = e.Stock
		}
	case event.KindWrite:
		if e.Has&event.HasStock != 0 && e.OK {
			t.r.StockAfter = e.Stock
		}
	case event.KindDone:
		t.r.Success, t.r.Code, t.r.Msg = e.OK, e.Code, e.Msg
		if e.Has&event.HasDelay != 0 {
			t.r.RetryAfter = e.Delay
		}
	}
}

// begin makes the next worker, or says why there is none.
func (o *Outside) begin() (*Worker, *tally, error) {
	o.mu.Lock()
	switch {
	case o.ended:
		o.mu.Unlock()
		return nil, nil, ErrRunEnded
	case int(o.next) >= o.env.Params.Workers:
		o.mu.Unlock()
		return nil, nil, ErrRunFull
	}
	i := o.next
	o.next++
	o.flight.Add(1)
	o.mu.Unlock()
	w, err := o.env.lockedWorker(i)
	if err != nil {
		o.flight.Done()
		return nil, nil, err
	}
	t := &tally{r: Result{Worker: i, StockBefore: -1, StockAfter: -1}}
	w.tap = t.add
	return w, t, nil
}

// end is the worker's result; a worker denied a lock learns how long the
// lock (key, unless its done event said) has left to live.
func (o *Outside) end(w *Worker, t *tally, start time.Duration, key string) Result {
	defer o.flight.Done()
	t.mu.Lock()
	r := t.r
	t.mu.Unlock()
	if r.Denied() && r.RetryAfter == 0 && key != "" {
		r.RetryAfter = o.env.remaining(w.ctx, key)
	}
	r.Duration = o.env.Clock().Now() - start
	return r
}

// announce records, once per run, that res is an effect allowed once.
func (o *Outside) announce(res string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.made[res] {
		o.made[res] = true
		o.env.Emit(event.Event{Kind: event.KindInit, Res: res, Code: check.LimitOnce})
	}
}

// Buy is one purchase (oversell), as one of the scenario's workers makes it.
func (o *Outside) Buy() (Result, error) {
	w, t, err := o.begin()
	if err != nil {
		return Result{}, err
	}
	start := o.env.Clock().Now()
	buy(w.ctx, o.env, w)
	return o.end(w, t, start, o.env.Store.Key("lock:stock")), nil
}

// Deliver is one delivery of the webhook id (webhook).
func (o *Outside) Deliver(id string) (Result, error) {
	w, t, err := o.begin()
	if err != nil {
		return Result{}, err
	}
	d := deliveryOf(id)
	o.announce(d.credit)
	start := o.env.Clock().Now()
	deliver(w.ctx, o.env, w, d)
	return o.end(w, t, start, o.env.Store.Key("lock:"+id)), nil
}

// RunJob is one request to run job id (queue-double): the job is made
// the first time it is asked for, reserved for --ttl, run for --work and
// deleted. A job reserved by another is refused with the reservation's
// remaining time; a job done already is not run again.
func (o *Outside) RunJob(id string) (Result, error) {
	w, t, err := o.begin()
	if err != nil {
		return Result{}, err
	}
	env, ctx := o.env, w.ctx
	effect, reservedName := "effect:"+id, "reserved:job:"+id
	o.announce(effect)
	start := env.Clock().Now()
	st := env.Store
	reservation := env.Params.TTL.D()
	toServer := func(d time.Duration) time.Duration { return env.Clock().ToServer(d) }
	call := w.Now()
	res, err := reserveIDScript.Run(ctx, st.Client(), []string{st.Key("queue"), st.Key("job:" + id), st.Key(reservedName), st.Key("jobs")},
		id, w.ID, max(toServer(reservation).Milliseconds(), 1), "charge card 7 $100").Int64Slice()
	switch {
	case err != nil:
		if ctx.Err() == nil {
			w.OpError("acquire", event.Event{Res: reservedName}, call, err)
		}
		w.Fail(ctx, err, "")
	case res[0] == 1:
		since := env.Clock().Now() // the reservation runs from when the server set it, no earlier than now
		w.Emit(event.Event{Kind: event.KindAcquired, Res: reservedName, TTL: reservation, Has: event.HasTTL, Msg: "reserved job " + id})
		runJob(ctx, env, w, id, effect, since, reservation, toServer)
	case res[0] == 0 && len(res) > 1:
		after := env.Clock().FromServer(max(time.Duration(res[1])*time.Millisecond, 0))
		w.Emit(event.Event{Kind: event.KindDenied, Res: reservedName, Msg: "reserved by another worker"}.WithCall(call))
		w.done.Store(true)
		w.Emit(event.Event{Kind: event.KindDone, Code: check.FailLock, Delay: after, Has: event.HasDelay | event.HasOK,
			Msg: fmt.Sprintf("409 job %s is reserved, retry after %d ms", id, after.Milliseconds())})
	default:
		w.Emit(event.Event{Kind: event.KindRead, Res: "job:" + id, Msg: "job " + id + " is done: nothing to run"}.WithCall(call))
		w.Done(false, check.FailStock, "job "+id+" is done already")
	}
	return o.end(w, t, start, ""), nil
}

// Clock is the run's clock.
func (o *Outside) Clock() *store.Clock { return o.env.Clock() }
