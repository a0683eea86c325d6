package scenario

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/reserve.lua
	reserveLua    string
	reserveScript = redis.NewScript(reserveLua)
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
	Defaults: withDefaults(func(p *Params) {
		p.Workers, p.TTL, p.Work = 2, Millis(2*time.Second), Millis(3*time.Second)
		p.RetryBase = Millis(100 * time.Millisecond)
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
	env.Emit(Event{Kind: KindInit, Res: "effect", Code: LimitOnce})
	reservation, poll := env.Params.TTL.D(), env.Params.RetryBase.D()
	ttlMs := func(d time.Duration) time.Duration { return env.Clock().ToServer(d) }
	done := make(chan struct{})
	// The queue's reaper: a job whose reservation lapsed goes back in line.
	reaper := make(chan struct{})
	go func() {
		defer close(reaper)
		for {
			select {
			case <-done:
				return
			default:
			}
			if env.Clock().Sleep(ctx, poll) != nil {
				return
			}
			exists, _ := c.Exists(ctx, job).Result()
			held, _ := c.Exists(ctx, reserved).Result()
			queued, _ := c.LLen(ctx, queue).Result()
			if exists == 1 && held == 0 && queued == 0 {
				c.RPush(ctx, queue, "42")
				env.Emit(Event{Kind: KindExpired, Res: "reserved:job:42", Msg: "reservation lapsed: job 42 redelivered"})
			}
		}
	}()
	err := env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		if w.Sleep(ctx, time.Duration(w.ID)*poll/2) != nil {
			w.Done(false, FailCancel, "interrupted")
			return
		}
		limit := env.Clock().Now() + reservation + env.Params.Work.D() + time.Second
		for {
			call := w.Now()
			id, err := reserveScript.Run(ctx, c, []string{queue, st.Key("reserved:job:")}, w.ID, max(ttlMs(reservation).Milliseconds(), 1)).Text()
			if err == nil {
				runJob(ctx, env, w, id, reservation, ttlMs)
				return
			}
			if !errors.Is(err, redis.Nil) { // not "the queue is empty": the server failed
				if ctx.Err() == nil {
					w.OpError("acquire", Event{Res: "reserved:job:42"}, call, err)
				}
				w.Fail(ctx, err, "")
				return
			}
			if env.Clock().Now() > limit {
				w.Done(true, "", "queue empty")
				return
			}
			if w.Sleep(ctx, poll) != nil {
				w.Done(false, FailCancel, "interrupted")
				return
			}
		}
	})
	close(done)
	<-reaper
	return err
}

// runJob runs a reserved job and deletes it.
func runJob(ctx context.Context, env *Env, w *Worker, id string, reservation time.Duration, server func(time.Duration) time.Duration) {
	st := env.Store
	c := st.Client()
	job, reserved := st.Key("job:"+id), st.Key("reserved:job:"+id)
	w.Emit(Event{Kind: KindAcquired, Res: "reserved:job:" + id, TTL: reservation, Has: HasTTL, Msg: "reserved job " + id})
	w.Emit(Event{Kind: KindWorkStart, Res: "job:" + id})
	hb := make(chan struct{})
	hbDone := make(chan struct{})
	go func() { // heartbeat: renew the reservation while the job runs
		defer close(hbDone)
		if env.Strategy != "heartbeat" {
			return
		}
		for {
			if env.Clock().Sleep(ctx, reservation/3) != nil {
				return
			}
			select {
			case <-hb:
				return
			default:
			}
			if ok, _ := c.PExpire(ctx, reserved, server(reservation)).Result(); ok {
				w.Emit(Event{Kind: KindRenewed, Res: "reserved:job:" + id, TTL: reservation, Has: HasTTL})
			}
		}
	}()
	err := w.Sleep(ctx, env.Params.Work.D())
	if err == nil {
		apply := true
		if env.Strategy == "idempotency" {
			call := w.Now()
			first, serr := c.SetNX(ctx, st.Key("done:job:"+id), w.ID, 0).Result()
			if serr != nil && ctx.Err() == nil {
				w.OpError("write", Event{Res: "done:job:" + id}, call, serr)
				err = serr
			}
			apply = first
			if !first && serr == nil {
				w.Emit(Event{Kind: KindRead, Res: "done:job:" + id, Msg: "effect already applied: skipped"}.WithCall(call))
			}
		}
		if apply {
			w.Emit(Event{Kind: KindWrite, Res: "effect", Msg: "charged card 7 $100"}.WithOK(true))
		}
	}
	close(hb)
	<-hbDone
	w.Emit(Event{Kind: KindWorkEnd, Res: "job:" + id})
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
			w.OpError("release", Event{Res: "job:" + id}, call, err)
		}
		w.Fail(ctx, err, "")
		return
	}
	if n == 0 {
		w.Emit(Event{Kind: KindReleaseFailed, Res: "job:" + id, Msg: "delete failed: not found / not reserved"}.WithOK(false))
		w.Done(false, FailError, fmt.Sprintf("job %s: delete failed, not found / not reserved", id))
		return
	}
	w.Emit(Event{Kind: KindRelease, Res: "job:" + id, Msg: "job deleted"}.WithOK(true))
	w.Done(true, "", "")
}
