package scenario

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/clock"
)

var (
	//go:embed scripts/reserve.lua
	reserveLua    string
	reserveScript = redis.NewScript(reserveLua)
	//go:embed scripts/requeue.lua
	requeueLua    string
	requeueScript = redis.NewScript(requeueLua)
	//go:embed scripts/touch.lua
	touchLua    string
	touchScript = redis.NewScript(touchLua)
)

var queueDouble = &Scenario{
	Name:  "queue-double",
	Speed: 0.5, // 5 s: 10 s
	Title: "A job processed twice: reservation shorter than the job",
	Watch: "the job redelivered while w00 still runs it, both inside at once, and w01's delete failing",
	Explain: "w00 reserves job 42 for --ttl 2s but the job takes --work 3s. The reservation lapses, the " +
		"queue hands the job to w01, and both run it: its effect happens twice. w00 finishes and deletes the " +
		"job; w01's delete then fails — not found, not reserved. heartbeat renews the reservation while the " +
		"job runs; idempotency lets it run twice but guards the effect with a key.",
	Source:     "the PHP locking-strategies blog (queue workers)",
	Strategies: []string{"plain", "heartbeat", "idempotency"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.TTL, p.Work = 2, event.Millis(2*time.Second), event.Millis(3*time.Second)
		p.RetryBase = event.Millis(100 * time.Millisecond)
	}),
	Uses:  []string{"ttl", "work", "retry-base"},
	run:   runQueue,
	beats: queueBeats,
}

func runQueue(ctx context.Context, env *Env) error {
	st := env.Store
	c := st.Client()
	queue, job, reserved := st.Key("queue"), st.Key("job:42"), st.Key("reserved:job:42")
	if err := c.Set(ctx, job, "charge card 7 $100", 0).Err(); err != nil {
		return err
	}
	if err := c.RPush(ctx, queue, "42").Err(); err != nil {
		return err
	}
	env.Emit(event.Event{Kind: event.KindInit, Res: "effect", Code: check.LimitOnce})
	poll := env.Params.RetryBase.D()
	done := make(chan struct{})
	// order keeps the log in the queue's own order: a redelivery is logged
	// before the reservation it makes possible, however the goroutines that
	// saw them are scheduled.
	order := clock.NewMutex(env.Clock())
	// The queue's reaper: a job whose reservation lapsed goes back in line.
	reaper := clock.NewGroup(env.Clock())
	reaper.Go(ctx, "reaper", func(ctx context.Context) {
		for {
			select {
			case <-done:
				return
			default:
			}
			if env.Clock().Sleep(ctx, poll) != nil {
				return
			}
			order.Lock(ctx)
			if n, _ := requeueScript.Run(ctx, c, []string{queue, job, reserved}, "42").Int(); n == 1 {
				env.Emit(event.Event{Kind: event.KindExpired, Res: "reserved:job:42", Msg: "reservation lapsed: job 42 redelivered"})
			}
			order.Unlock()
		}
	})
	rd := newRedelivery(env.Params.Workers)
	err := env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		defer rd.leave()
		takeJobs(ctx, env, w, order, rd)
	})
	close(done)
	reaper.Wait(ctx)
	return err
}

// takeJobs is one queue worker: it reserves the next job (job 42, once
// the queue has it back), runs it and deletes it, polling an empty queue
// for as long as a job could still come back. order serialises its
// reservations with the reaper's redeliveries in the log (one process's).
// redelivery tells a holder whose reservation lapsed that its job has
// been reserved again, or that nobody else is left to: its work waits for
// that, so however late a busy machine's reaper is, the redelivery meets
// a job still running. nil (workers in other processes) waits for nothing.
type redelivery struct {
	again        *cue
	reservations atomic.Int32
	left         atomic.Int32
}

func newRedelivery(workers int) *redelivery {
	rd := &redelivery{again: newCue()}
	rd.left.Store(int32(workers))
	return rd
}

// reserved counts a reservation of the job.
func (rd *redelivery) reserved() {
	if rd != nil && rd.reservations.Add(1) > 1 {
		rd.again.give()
	}
}

// leave counts a worker out.
func (rd *redelivery) leave() {
	if rd != nil && rd.left.Add(-1) <= 1 {
		rd.again.give()
	}
}

// wait waits for the job to be reserved again, or for nobody else to be left.
func (rd *redelivery) wait(ctx context.Context) error {
	if rd == nil {
		return nil
	}
	return rd.again.wait(ctx)
}

func takeJobs(ctx context.Context, env *Env, w *Worker, order *clock.Mutex, rd *redelivery) {
	st := env.Store
	c := st.Client()
	queue := st.Key("queue")
	reservation, poll := env.Params.TTL.D(), env.Params.RetryBase.D()
	ttlMs := func(d time.Duration) time.Duration { return env.Clock().ToServer(d) }
	if w.Sleep(ctx, time.Duration(w.ID)*poll/2) != nil {
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	limit := env.Clock().Now() + reservation + env.Params.Work.D() + time.Second
	for {
		call := w.Now()
		order.Lock(ctx)
		id, err := reserveScript.Run(ctx, c, []string{queue, st.Key("reserved:job:"), st.Key("job:")}, env.Lane(w), max(ttlMs(reservation).Milliseconds(), 1)).Text()
		since := env.Clock().Now() // the reservation runs from when the server set it, no earlier than now
		if err == nil {
			w.Emit(event.Event{Kind: event.KindAcquired, Res: "reserved:job:" + id, TTL: reservation, Has: event.HasTTL, Msg: "reserved job " + id})
			rd.reserved()
		}
		order.Unlock()
		if err == nil {
			runJobUntil(ctx, env, w, id, "effect", since, reservation, ttlMs, rd)
			return
		}
		if !errors.Is(err, redis.Nil) { // not "the queue is empty": the server failed
			if ctx.Err() == nil {
				w.OpError("acquire", event.Event{Res: "reserved:job:42"}, call, err)
			}
			w.Fail(ctx, err, "")
			return
		}
		if env.Clock().Now() > limit {
			w.Done(true, "", "queue empty")
			return
		}
		if w.Sleep(ctx, poll) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
	}
}

// runJob runs a reserved job and deletes it. With heartbeat, the
// reservation is extended every third of its length while the job runs,
// only while it is still w's; a heartbeat that finds it lapsed or taken
// stops the job before its effect, as a worker told "not reserved" must.
// effect names the resource the job's effect is.
func runJob(ctx context.Context, env *Env, w *Worker, id, effect string, since, reservation time.Duration, server func(time.Duration) time.Duration) {
	runJobUntil(ctx, env, w, id, effect, since, reservation, server, nil)
}

// runJobUntil is runJob whose work, once its reservation has lapsed
// (without heartbeat), also lasts until rd says the job was reserved again.
func runJobUntil(ctx context.Context, env *Env, w *Worker, id, effect string, since, reservation time.Duration, server func(time.Duration) time.Duration, rd *redelivery) {
	st := env.Store
	c := st.Client()
	job, reserved := st.Key("job:"+id), st.Key("reserved:job:"+id)
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: "job:" + id})
	jobCtx, lose := env.Clock().WithCancelCause(ctx)
	defer lose(nil)
	hctx, stopHeartbeat := env.Clock().WithCancel(jobCtx)
	defer stopHeartbeat()
	heartbeat := clock.NewGroup(env.Clock())
	if env.Strategy == "heartbeat" {
		heartbeat.Go(hctx, "heartbeat of "+check.WorkerName(w.ID), func(hctx context.Context) {
			heartbeatJob(hctx, env, w, id, since, reservation, server, lose)
		})
	}
	err := w.Sleep(jobCtx, env.Params.Work.D())
	if err == nil && env.Strategy != "heartbeat" && env.Clock().Now() >= since+reservation {
		err = rd.wait(jobCtx)
	}
	if err == nil {
		apply := true
		if env.Strategy == "idempotency" {
			call := w.Now()
			first, serr := c.SetNX(ctx, st.Key("done:job:"+id), env.Lane(w), 0).Result()
			if serr != nil && ctx.Err() == nil {
				w.OpError("write", event.Event{Res: "done:job:" + id}, call, serr)
				err = serr
			}
			apply = first
			if !first && serr == nil {
				w.Emit(event.Event{Kind: event.KindRead, Res: "done:job:" + id, Msg: "effect already applied: skipped"}.WithCall(call))
			}
		}
		if apply {
			w.Emit(event.Event{Kind: event.KindWrite, Res: effect, Msg: "charged card 7 $100"}.WithOK(true))
		}
	}
	stopHeartbeat()
	heartbeat.Wait(ctx)
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "job:" + id})
	if errors.Is(context.Cause(jobCtx), errReservationLost) {
		w.Done(false, check.FailLock, "reservation lost: stopped before the effect")
		return
	}
	if err != nil {
		w.Fail(ctx, err, "")
		return
	}
	call := w.Now()
	n, err := c.Del(ctx, job).Result()
	if err == nil {
		err = c.Del(ctx, reserved).Err()
	}
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("release", event.Event{Res: "job:" + id}, call, err)
		}
		w.Fail(ctx, err, "")
		return
	}
	if n == 0 {
		w.Emit(event.Event{Kind: event.KindReleaseFailed, Res: "job:" + id, Msg: "delete failed: not found / not reserved"}.WithOK(false))
		// Not a server's failure: the reservation lapsed while the job
		// ran, another worker was given it and deleted it first.
		w.Done(false, check.FailLock, fmt.Sprintf("job %s: delete failed, not found / not reserved — the job was redelivered while it ran, and the other run deleted it first", id))
		return
	}
	w.Emit(event.Event{Kind: event.KindRelease, Res: "job:" + id, Msg: "job deleted"}.WithOK(true))
	w.Done(true, "", "")
}

var errReservationLost = errors.New("reservation lost")

// heartbeatJob renews w's reservation of job id while the job runs, until
// hctx ends; a lapsed reservation ends the job (lose).
func heartbeatJob(hctx context.Context, env *Env, w *Worker, id string, since, reservation time.Duration, server func(time.Duration) time.Duration, lose context.CancelCauseFunc) {
	c := env.Store.Client()
	reserved := env.Store.Key("reserved:job:" + id)
	for due := since + reservation/3; ; {
		if env.Clock().SleepUntil(hctx, due) != nil {
			return
		}
		sent := env.Clock().Now()
		n, err := touchScript.Run(hctx, c, []string{reserved}, env.Lane(w), max(server(reservation).Milliseconds(), 1)).Int()
		switch {
		case hctx.Err() != nil:
			return
		case err == nil && n == 1:
			due = sent + reservation/3
			w.Emit(event.Event{Kind: event.KindRenewed, Res: "reserved:job:" + id, TTL: reservation, Has: event.HasTTL}.WithCall(sent))
		case err == nil:
			w.Emit(event.Event{Kind: event.KindLockLost, Res: "reserved:job:" + id, Msg: "reservation lapsed: the job is no longer ours"})
			lose(errReservationLost)
			return
		default:
			w.Emit(event.Event{Kind: event.KindRenewFailed, Res: "reserved:job:" + id, Msg: err.Error()}.WithCall(sent))
			due = env.Clock().Now() + reservation/3
		}
	}
}
