package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/redis/go-redis/v9"
)

var cron = &Scenario{
	Name:  "cron",
	Speed: 0.05, // 450–750 ms: 9–15 s
	Title: "A scheduled job run twice: servers' clocks a little apart",
	Watch: "w02, whose clock is late, finding the lock free after w00's job ended, and running the job again",
	Explain: "Three servers' schedulers fire the same job (the 09:00 report) once a period; their clocks are a " +
		"little apart. w00 fires on time and takes the lock; w01, a little ahead, finds it held and skips. " +
		"With release the lock is freed when the job ends, so w02, whose clock is late by more than the job " +
		"takes, finds it free and runs the 09:00 report again: ran twice. hold keeps the lock for the whole " +
		"period (SET lock:report@09:00 NX PX period, never released); last-run releases it but records the " +
		"period in a last-run key the next holder checks. none has no lock: every server runs it.",
	Source:     "the locking-patterns article (only one process runs a scheduled task)",
	Strategies: []string{"release", "hold", "last-run", "none"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.TTL, p.Work = 3, event.Millis(10*time.Second), event.Millis(300*time.Millisecond)
	}),
	Uses:  []string{"ttl", "work"},
	Cast:  3,
	run:   runCron,
	beats: cronBeats,
	// Every way but none takes a safe lock on the period.
	lockOf: func(s string) string {
		if s == "none" {
			return "none"
		}
		return "safe"
	},
}

// The job and its period, as the log names them.
const (
	cronJob    = "report"
	cronPeriod = "09:00"
	cronRun    = cronJob + "@" + cronPeriod // the once-a-period effect
	cronLast   = "last-run:" + cronJob
)

// cronServer is one server's part: how far its clock is off, what it
// waits for before its scheduler fires, and what it tells the others.
type cronServer struct {
	offset time.Duration
	after  *cue // fires no earlier than this (nil: only its clock)
	tried  *cue // given once it has fired and tried
	done   *cue // given once its part is over
	until  *cue // a job it runs lasts at least --work and until this
}

func runCron(ctx context.Context, env *Env) error {
	env.Emit(event.Event{Kind: event.KindInit, Res: cronRun, Code: check.LimitOnce})
	work := env.Params.Work.D()
	// The story is a chain of cues besides the clocks, so a busy machine
	// cannot reorder it: w01 fires once w00 is inside and w00 works until
	// w01 has tried; w02 fires once w00's part is over.
	w00In, w01Tried, w00Done := newCue(), newCue(), newCue()
	parts := []cronServer{
		{offset: 0, tried: w00In, done: w00Done, until: w01Tried},
		{offset: work / 3, after: w00In, tried: w01Tried},
		{offset: work + work/2, after: w00Done},
	}
	return env.Workers(ctx, 3, func(ctx context.Context, w *Worker) {
		part := parts[w.ID]
		defer part.done.give()
		defer part.tried.give()
		if w.Sleep(ctx, part.offset) != nil || part.after.wait(ctx) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		fireCron(ctx, env, w, part)
	})
}

// fireCron is w's scheduler firing the job under the run's strategy.
func fireCron(ctx context.Context, env *Env, w *Worker, part cronServer) {
	if env.Strategy == "none" {
		finishCron(ctx, w, runCronJob(ctx, env, w, part), "ran the job")
		return
	}
	st := env.Store
	l, err := env.NewLock(w, "safe", lock.Retry{}, nil)
	if err != nil {
		w.Done(false, check.FailError, err.Error())
		return
	}
	key := st.Key("lock:" + cronJob)
	if env.Strategy == "hold" {
		key = st.Key("lock:" + cronRun)
	}
	lease, err := l.TryAcquire(ctx, key, env.Params.TTL.D())
	part.tried.give()
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		w.Done(true, "", "skipped: another server has the job")
		return
	case err != nil:
		w.Fail(ctx, err, "")
		return
	}
	msg := "ran the job"
	if env.Strategy == "last-run" {
		var ran bool
		if ran, err = alreadyRan(ctx, env, w); err == nil && ran {
			releaseQuietly(ctx, lease)
			w.Done(true, "", "skipped: the last-run key says "+cronPeriod+" is done")
			return
		}
	}
	if err == nil {
		err = runCronJob(ctx, env, w, part)
	}
	if env.Strategy == "hold" {
		msg = "ran the job; the lock stays until the period ends"
	} else {
		releaseQuietly(ctx, lease)
	}
	finishCron(ctx, w, err, msg)
}

func finishCron(ctx context.Context, w *Worker, err error, msg string) {
	if err != nil {
		w.Fail(ctx, err, "")
		return
	}
	w.Done(true, "", msg)
}

// alreadyRan reads the last-run key; if this period is not in it, it
// writes it there before the job runs.
func alreadyRan(ctx context.Context, env *Env, w *Worker) (bool, error) {
	c, key := env.Store.Client(), env.Store.Key(cronLast)
	call := w.Now()
	last, err := c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		last, err = "never", nil
	}
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("read", event.Event{Res: cronLast}, call, err)
		}
		return false, err
	}
	w.Emit(event.Event{Kind: event.KindRead, Res: cronLast, Msg: "last run: " + last}.WithCall(call))
	if last == cronPeriod {
		return true, nil
	}
	call = w.Now()
	if err := c.Set(ctx, key, cronPeriod, 0).Err(); err != nil {
		if ctx.Err() == nil {
			w.OpError("write", event.Event{Res: cronLast}, call, err)
		}
		return false, err
	}
	w.Emit(event.Event{Kind: event.KindWrite, Res: cronLast, Msg: "last run: " + cronPeriod}.WithOK(true).WithCall(call))
	return false, nil
}

// runCronJob runs the job: --work long (and until part.until), its effect
// the period's report.
func runCronJob(ctx context.Context, env *Env, w *Worker, part cronServer) error {
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: cronJob})
	part.tried.give() // inside: without a lock, the next server's cue
	err := w.Sleep(ctx, env.Params.Work.D())
	if err == nil {
		err = part.until.wait(ctx)
	}
	if err == nil {
		w.Emit(event.Event{Kind: event.KindWrite, Res: cronRun, Msg: fmt.Sprintf("sent the %s report", cronPeriod)}.WithOK(true))
	}
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: cronJob})
	return err
}

// duplicateDetail says, per scenario, why its effect was applied twice.
var duplicateDetail = map[string]func(strategy string) string{
	"cron": func(strategy string) string {
		if strategy == "none" {
			return "No lock: every server's scheduler ran the job."
		}
		return "The lock was freed when the job ended, before the period did: a server whose clock is late took it and ran the job again. Hold it for the period, or record the last run."
	},
}

func cronBeats(strategy string, p event.Params) []Beat {
	late := p.Work.D() + p.Work.D()/2
	fired := Beat{"fired", is(event.KindWorkStart), func(e event.Event) string {
		return fmt.Sprintf("%s's scheduler fires at %s by its clock and sends the %s.", wn(e), cronPeriod, cronRun)
	}}
	if strategy == "none" {
		return []Beat{fired,
			{"again", func(e event.Event) bool { return e.Kind == event.KindWorkStart && e.Worker != 0 }, func(e event.Event) string {
				return fmt.Sprintf("%s's scheduler fires too: no lock, so it sends the %s as well.", wn(e), cronJob)
			}},
			{"duplicate", violation(check.CodeDuplicate), checkerSays("The checker: ")}}
	}
	bs := []Beat{
		{"fired", is(event.KindAcquired), func(e event.Event) string {
			return fmt.Sprintf("%s's scheduler fires at %s by its clock and takes the lock.", wn(e), cronPeriod)
		}},
		{"skipped", by(event.KindDenied, 1), func(e event.Event) string {
			return fmt.Sprintf("%s's clock is %s ahead: it fires while w00 is at work, finds the lock held and skips.", wn(e), ms(p.Work.D()/3))
		}},
	}
	switch strategy {
	case "release":
		bs = append(bs,
			Beat{"released", by(event.KindRelease, 0), said("w00 is done and releases the lock: the period is not over.")},
			Beat{"late", by(event.KindAcquired, 2), func(e event.Event) string {
				return fmt.Sprintf("%s's clock is %s late: at %s by its clock the lock is free, and it sends the %s again.", wn(e), ms(late), cronPeriod, cronJob)
			}},
			Beat{"duplicate", violation(check.CodeDuplicate), checkerSays("The checker: ")})
	case "hold":
		bs = append(bs, Beat{"held", by(event.KindDenied, 2), func(e event.Event) string {
			return fmt.Sprintf("%s's clock is %s late, but the lock is held for the whole period: it skips.", wn(e), ms(late))
		}})
	case "last-run":
		bs = append(bs, Beat{"checked", func(e event.Event) bool {
			return e.Kind == event.KindRead && e.Worker == 2 && e.Res == cronLast
		}, func(e event.Event) string {
			return fmt.Sprintf("%s's clock is %s late and the lock is free, but the last-run key says %s ran: it skips.", wn(e), ms(late), cronPeriod)
		}})
	}
	return bs
}
