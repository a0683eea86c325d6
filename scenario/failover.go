package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/clock"
)

var failoverScenario = &Scenario{
	Name:  "failover",
	Speed: 0.5,
	Title: "Failover: the lock the replica never saw",
	Watch: "the failover on the node lane, then a second holder beside the first",
	Explain: "One primary with an asynchronous replica that trails it by the TTL. w00 takes the lock on the " +
		"primary and works; the primary dies before the lock key reaches the replica, and the replica is " +
		"promoted. It has never heard of w00's lock, so w01 gets it: two holders, and w00's release is refused " +
		"on a key that is no longer its own. On the embedded store the replica is emulated (simulated, the same " +
		"seed, the same log); with --topology sentinel the primary is a real redis-server killed by SIGKILL and " +
		"Sentinel promotes the real replica (--topology replica: REPLICAOF NO ONE). What would have prevented " +
		"it: a fencing token the resource checks, WAIT before trusting the lock, or Redlock's independent primaries.",
	Source:     "the Valkey distributed-locks page (the failover warning); the Redlock article",
	Strategies: []string{"safe", "redislock", "redsync", "rueidislock"},
	Defaults: withDefaults(func(p *event.Params) {
		p.TTL, p.Work = event.Millis(5*time.Second), event.Millis(3*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 100
	}),
	Uses:  []string{"ttl", "work", "retry-base", "max-retries"},
	Cast:  2,
	run:   runFailover,
	beats: failoverBeats,
}

// failoverRes is the lock's resource.
const failoverRes = "stock"

func runFailover(ctx context.Context, env *Env) error {
	node := env.Store.Nodes()[0]
	ttl, work := env.Params.TTL.D(), env.Params.Work.D()
	if !node.Embedded() && !node.Spawned() {
		env.Emit(event.Event{Kind: event.KindBeat, Msg: "failover needs a primary with a replica locklab controls: the embedded store, or --topology replica or sentinel"})
		return nil
	}
	// The replica trails by the TTL: while w00's lock is valid the replica
	// has not received it, however late a busy machine makes the failover.
	if err := node.Replicate(ttl); err != nil {
		env.Emit(event.Event{Kind: event.KindBeat, Msg: "no replica for the primary: " + err.Error()})
		return nil
	}
	env.Emit(event.Event{Kind: event.KindInit, Res: failoverRes})
	a, err := env.lockedWorker(0)
	if err != nil {
		return err
	}
	b, err := env.lockedWorker(1)
	if err != nil {
		return err
	}
	got, in := make(chan bool, 1), make(chan bool, 1)
	g := clock.NewGroup(env.Clock())
	g.Go(ctx, check.WorkerName(a.ID), func(context.Context) {
		hold(env, a, a.Lock, failoverRes, ttl, work, got)
	})
	if ok, _, _ := recv(ctx, got); ok {
		env.Clock().Sleep(ctx, work/10)
		if _, err := fault(env, node, "failover", 0); err == nil {
			hold(env, b, b.Lock, failoverRes, ttl, work/2, in)
		} else {
			b.Done(false, check.FailCancel, "no failover: "+err.Error())
		}
	} else {
		b.Done(false, check.FailCancel, "w00 never held the lock")
	}
	g.Wait(ctx)
	return ctx.Err()
}

func failoverBeats(string, event.Params) []Beat {
	return []Beat{
		{"acquired", is(event.KindAcquired), func(e event.Event) string {
			return fmt.Sprintf("%s holds the lock — on the primary only: its replica trails by the TTL and has not received the key.", wn(e))
		}},
		{"failover", is(event.KindFailover), func(e event.Event) string {
			how := "The emulated replica is promoted"
			switch {
			case strings.Contains(e.Msg, "Sentinel"):
				how = "Sentinel promotes the real replica"
			case strings.Contains(e.Msg, "REPLICAOF"):
				how = "The replica is promoted (REPLICAOF NO ONE)"
			}
			return "The primary dies before the lock key replicated. " + how + ": it has never heard of the lock."
		}},
		{"overlap", violation(check.CodeOverlap), said("A second worker acquires on the promoted replica: two holders at once. " +
			"A fencing token checked by the resource, WAIT for the replica before trusting the lock, or Redlock's independent primaries would have prevented it.")},
	}
}
