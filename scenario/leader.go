package scenario

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/redis/go-redis/v9"
)

var leaderScenario = &Scenario{
	Name:  "leader",
	Speed: 0.5, // 1 s TTL, 2.5 s pause: about 4 s
	Title: "Leader election: the leader pauses, and who else acts",
	Watch: "w00 elected and acting, its stop-the-world pause, w01 elected meanwhile, and whose write the ledger takes when w00 wakes",
	Explain: "Two candidates campaign for leadership; the leader writes to a ledger, the work only a leader may do. " +
		"With watchdog the leader is whoever holds a Redis lock it renews every ttl/3. w00 wins and acts, then " +
		"stops the world for --work, longer than the TTL: its renewals stop with it, the lock lapses, w01 is " +
		"elected and acts — and w00 wakes still believing it leads and writes too: two leaders. With etcd the " +
		"candidates campaign in an etcd election; w00's lease lapses the same way, but each leader writes with " +
		"its key's revision and the ledger refuses the stale leader's older one.",
	Source:     "the PHP + Redis locking lab's future improvements (leader election); Kleppmann (fencing)",
	Strategies: []string{"watchdog"},
	more:       leaderOnEtcd,
	Defaults: withDefaults(func(p *event.Params) {
		p.TTL, p.Work = event.Millis(time.Second), event.Millis(2500*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(50*time.Millisecond), 1000
	}),
	Uses:  []string{"ttl", "work", "retry-base"},
	Cast:  2,
	run:   runLeader,
	beats: leaderBeats,
}

// leaderOnEtcd is the other way to elect a leader, when this program has
// etcd: an etcd election.
func leaderOnEtcd() []string {
	if _, ok := lock.Lookup("etcd"); ok {
		return []string{"etcd"}
	}
	return nil
}

// electsOnEtcd reports whether the strategy's lock lives on etcd: the
// candidates then campaign in an etcd election.
func electsOnEtcd(strategy string) bool { return lockInfo(strategy).Server == lock.ServerEtcd }

// The names the log uses.
const (
	leaderLock   = "lock:leader"
	leaderRole   = "leader" // the critical section: being the leader
	leaderLedger = "ledger" // what only a leader may write
)

// leaderTerm is one candidate's time as leader.
type leaderTerm struct {
	fence int64  // its revision (etcd), 0 with a Redis lock
	pause func() // stops what keeps its lease alive while it is stopped
	step  func() // steps down
	lost  func() bool
	ended <-chan struct{} // closed when its lease ends, lost or released; nil: never
}

func runLeader(ctx context.Context, env *Env) error {
	st := env.Store
	if err := st.Client().Set(ctx, st.Key(leaderLedger), 0, 0).Err(); err != nil {
		return err
	}
	env.Emit(event.Event{Kind: event.KindInit, Res: leaderLedger})
	// w01 campaigns once w00 leads; w00's pause lasts --work and until w01
	// has acted as leader; w01 steps down once w00 has woken and acted.
	elected, newActed, staleActed := newCue(), newSignal(), newCue()
	return env.Workers(ctx, 2, func(ctx context.Context, w *Worker) {
		if w.ID == 0 {
			defer elected.give()
			defer staleActed.give()
		} else {
			defer newActed.give()
			if elected.wait(ctx) != nil {
				w.Done(false, check.FailCancel, "interrupted")
				return
			}
		}
		// Renewed, or lost: a lease that lapsed before its first renewal
		// (a clock run far faster than the server answers) never renews.
		// Only once w leads: its first keep-alive may be logged before it
		// takes office, and the story tells of a renewal while it leads.
		renewed := newCue()
		var leads, lost atomic.Bool
		w.tap = func(e event.Event) {
			switch e.Kind {
			case event.KindWorkStart:
				leads.Store(true)
				if lost.Load() {
					renewed.give()
				}
			case event.KindLockLost:
				lost.Store(true)
				if leads.Load() {
					renewed.give()
				}
			case event.KindRenewed:
				if leads.Load() {
					renewed.give()
				}
			}
		}
		term, err := campaign(ctx, env, w)
		if err != nil {
			w.Fail(ctx, err, "not elected")
			return
		}
		w.Emit(event.Event{Kind: event.KindWorkStart, Res: leaderRole})
		if w.ID == 0 {
			elected.give()
			leadThenPause(ctx, env, w, term, renewed, newActed, staleActed)
			return
		}
		if _, err = leaderAct(ctx, env, w, term, 2); err == nil {
			newActed.give()
			err = staleActed.wait(ctx)
		}
		stepDown(ctx, w, term, err, true)
	})
}

// campaign runs w's campaign until it is elected.
func campaign(ctx context.Context, env *Env, w *Worker) (*leaderTerm, error) {
	if electsOnEtcd(env.Strategy) {
		rev, orphan, resign, err := leaderElection(ctx, env, w)
		if err != nil {
			return nil, err
		}
		return &leaderTerm{fence: rev, pause: orphan, step: resign, lost: func() bool { return false }}, nil
	}
	lease, err := w.Lock.Acquire(ctx, env.Store.Key(leaderLock), env.Params.TTL.D())
	if err != nil {
		return nil, err
	}
	// The watchdog's renewals stop by themselves while w is paused.
	return &leaderTerm{fence: lease.Fence, pause: func() {}, step: func() { releaseQuietly(ctx, lease) },
		lost: lease.Lost, ended: lease.Context().Done()}, nil
}

// leadThenPause is the first leader: it acts, renews, acts again, stops
// the world until a new leader has acted, then wakes and acts once more.
func leadThenPause(ctx context.Context, env *Env, w *Worker, term *leaderTerm, renewed *cue, newActed *signal, staleActed *cue) {
	_, err := leaderAct(ctx, env, w, term, 1)
	if err == nil {
		err = w.Sleep(ctx, env.Params.TTL.D()/2)
	}
	if err == nil { // it has led long enough to renew, or its lease ended first
		_, err = await(ctx, renewed.ch, term.ended)
	}
	if err == nil {
		_, err = leaderAct(ctx, env, w, term, 1)
	}
	if err == nil {
		term.pause()
		err = w.PauseUntil(ctx, env.Params.Work.D(), newActed.ch, "stop-the-world pause")
	}
	if err == nil {
		// It wakes where it stopped: about to act as the leader it was.
		_, err = leaderAct(ctx, env, w, term, 1)
	}
	staleActed.give()
	stepDown(ctx, w, term, err, false)
}

// leaderAct is one leader-only write: the ledger records the leader's
// term n, and with a fence (not 0) refuses one older than the newest it
// has seen: a leader may write again with its own. false: refused.
func leaderAct(ctx context.Context, env *Env, w *Worker, term *leaderTerm, n int64) (bool, error) {
	st := env.Store
	call := w.Now()
	ev := event.Event{Res: leaderLedger}.WithStock(n)
	var err error
	written := int64(1)
	if term.fence == 0 {
		err = st.Client().Set(ctx, st.Key(leaderLedger), n, 0).Err()
	} else {
		ev = ev.WithFence(term.fence)
		written, err = ledgerScript.Run(ctx, st.Client(), []string{st.Key(leaderLedger), st.Key(leaderLedger + ":fence")}, term.fence, n).Int64()
	}
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("write", ev, call, err)
		}
		return false, err
	}
	switch {
	case term.fence == 0:
	case written == 0:
		w.Emit(event.Event{Kind: event.KindFenceRejected, Res: leaderLedger}.WithFence(term.fence).WithCall(call))
	default:
		w.Emit(event.Event{Kind: event.KindFenceOK, Res: leaderLedger}.WithFence(term.fence).WithCall(call))
	}
	ev.Kind = event.KindWrite
	w.Emit(ev.WithOK(written != 0).WithCall(call))
	return written != 0, nil
}

// ledgerScript writes ARGV[2] at KEYS[1] unless ARGV[1] is older than the
// newest fence KEYS[2] has seen.
var ledgerScript = redis.NewScript(`
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = tonumber(ARGV[1])
if fence < last then return 0 end
redis.call('SET', KEYS[2], fence)
redis.call('SET', KEYS[1], ARGV[2])
return 1`)

// stepDown ends w's term and records its outcome.
func stepDown(ctx context.Context, w *Worker, term *leaderTerm, err error, ok bool) {
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: leaderRole})
	term.step()
	switch {
	case err != nil && ctx.Err() != nil:
		w.Done(false, check.FailCancel, "interrupted")
	case err != nil:
		w.Fail(ctx, err, "")
	case !ok:
		w.Done(true, "", "stepped down after its pause")
	default:
		w.Done(true, "", "stepped down")
	}
}

// leaderBeats: elected, renewing, paused, new leader, the stale action.
func leaderBeats(strategy string, p event.Params) []Beat {
	how := "takes lock:leader and renews it every " + ms(p.TTL.D()/3)
	renews := "%s renews its lock while it leads; w01 campaigns and is denied."
	if electsOnEtcd(strategy) {
		how = "wins the etcd election on a lease of " + ms(p.TTL.D())
		renews = "%s keeps its lease alive while it leads; w01 campaigns and waits."
	}
	bs := []Beat{
		{"elected", by(event.KindWorkStart, 0), func(e event.Event) string {
			return fmt.Sprintf("%s %s: it is the leader, and writes its term to the ledger.", wn(e), how)
		}},
		{"renewing", by(event.KindRenewed, 0), func(e event.Event) string { return fmt.Sprintf(renews, wn(e)) }},
	}
	bs = append(bs,
		Beat{"paused", by(event.KindPause, 0), func(e event.Event) string {
			return fmt.Sprintf("%s stops the world for %s, longer than its %s lease: nothing renews it meanwhile.", wn(e), ms(p.Work.D()), ms(p.TTL.D()))
		}},
		Beat{"new-leader", by(event.KindWorkStart, 1), func(e event.Event) string {
			return fmt.Sprintf("The lease lapsed: %s is elected while w00 is still stopped, believing it leads.", wn(e))
		}},
		Beat{"stale-action", func(e event.Event) bool {
			return e.Worker == 0 && e.Res == leaderLedger && (e.Kind == event.KindFenceRejected || (e.Kind == event.KindWrite && e.OK))
		}, func(e event.Event) string {
			if e.Kind == event.KindFenceRejected {
				return fmt.Sprintf("%s wakes and writes as leader with revision %d: the ledger has seen a newer leader's and refuses it.", wn(e), e.Fence)
			}
			return fmt.Sprintf("%s wakes and writes as leader: the ledger takes it. Two leaders acted.", wn(e))
		}},
	)
	return bs
}
