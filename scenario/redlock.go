package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/redis/go-redis/v9"
)

var redlockScenario = &Scenario{
	Name:  "redlock",
	Speed: 0.5, // 3.6 s: 7 s
	Title: "Redlock under faults: quorum, clock jumps, failovers, pauses",
	Watch: "the per-node votes, and the two holders at once after each fault",
	Explain: "Four parts on five nodes, each on its own lock. 1: two nodes down, the quorum (3) still " +
		"grants; a third down and it is denied. 2: w02 holds a bare majority (nodes 0–2; 3 and 4 are cut off " +
		"from it); node 2's clock jumps past the TTL, the key lapses there, and w03 gets nodes 2–4 — two " +
		"holders. 3: the same with node 2's primary failing over to its asynchronous replica, which had not " +
		"yet received w04's write. 4: w06 holds on all five, then " +
		"pauses past the lock's validity; w07 acquires; w06 wakes still believing it holds the lock.",
	Source:     "the locking-patterns article (Redlock); Kleppmann's critique; the Valkey example (failover)",
	Strategies: []string{"redlock"},
	Defaults: withDefaults(func(p *Params) {
		p.Workers, p.Nodes, p.TTL, p.Work = 8, 5, Millis(time.Second), Millis(300*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", Millis(50*time.Millisecond), 60
	}),
	Uses:  []string{"ttl", "work", "retry-base"},
	Cast:  8,
	run:   runRedlock,
	beats: redlockBeats,
}

func runRedlock(ctx context.Context, env *Env) error {
	nodes := env.Store.Nodes()
	if len(nodes) < 5 {
		env.Emit(Event{Kind: KindBeat, Msg: fmt.Sprintf("redlock needs 5 nodes, the store has %d: give five --redis URLs or use the embedded store", len(nodes))})
		return nil
	}
	for _, r := range []string{"Q", "J", "F", "P"} {
		env.Emit(Event{Kind: KindInit, Res: r})
	}
	ws := make([]*Worker, 8)
	for i := range ws {
		ws[i] = env.worker(int32(i))
	}
	cut := cutOff(env, 2) // nodes 3 and 4 as w02 and w04 see them: unreachable
	defer func() {
		for _, c := range cut {
			c.Close()
		}
	}()
	ttl := env.Params.TTL.D()
	// Node 2 has an asynchronous replica trailing it by half a TTL.
	_ = nodes[2].Replicate(ttl / 2) // unsupported on a real server: the failover beat says so
	full := lock.Clients(env.Store.Clients())
	partial := append(append([]lock.Client(nil), full[:3]...), cut[0], cut[1])
	redlockFor := func(w *Worker, clients []lock.Client, retry lock.Retry) *lock.Redlock {
		return lock.NewRedlock(clients, lock.Options{Clock: env.Clock(), Observer: w.observe, Retry: retry, Rand: w.Rand, Hold: w.hold})
	}
	once, poll := lock.Retry{}, env.Params.RetryPolicy()

	// Beat 1: the quorum.
	env.Emit(Event{Kind: KindBeat, Code: "part-1", Msg: "Part 1 of 4: two of five nodes go down — does a quorum of three still grant?"})
	_, _ = fault(env, nodes[3], "down", 0)
	_, _ = fault(env, nodes[4], "down", 0)
	hold(env, ws[0], redlockFor(ws[0], full, once), "Q", ttl, env.Params.Work.D())
	_, _ = fault(env, nodes[2], "down", 0)
	hold(env, ws[1], redlockFor(ws[1], full, once), "Q", ttl, env.Params.Work.D())
	for _, i := range []int{2, 3, 4} {
		_, _ = fault(env, nodes[i], "up", 0)
	}

	// Beats 2 and 3: a bare majority loses a node's copy of the key.
	for _, b := range []struct {
		res, kind, say string
		a, c           int
	}{
		{"J", "jump", "Part 2 of 4: node 2's clock jumps past the TTL", 2, 3},
		{"F", "failover", "Part 3 of 4: node 2's primary fails over to a replica that missed the last writes", 4, 5},
	} {
		env.Emit(Event{Kind: KindBeat, Code: map[string]string{"J": "part-2", "F": "part-3"}[b.res], Msg: b.say})
		holder := ws[b.a]
		got := make(chan bool, 1)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			hold(env, holder, redlockFor(holder, partial, once), b.res, ttl, 3*env.Params.Work.D(), got)
		}()
		if <-got {
			env.Clock().Sleep(ctx, env.Params.Work.D()/2)
			_, _ = fault(env, nodes[2], b.kind, ttl)
			hold(env, ws[b.c], redlockFor(ws[b.c], full, poll), b.res, ttl, env.Params.Work.D())
		}
		wg.Wait()
	}

	// Beat 4: a pause past the validity.
	env.Emit(Event{Kind: KindBeat, Code: "part-4", Msg: "Part 4 of 4: w06 takes the lock on all five nodes, then pauses past its validity"})
	var wg sync.WaitGroup
	inside := make(chan bool, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := ws[6]
		ctx := w.ctx
		l, err := redlockFor(w, full, once).Acquire(ctx, env.Store.Key("lock:P"), ttl)
		if err != nil {
			w.Fail(ctx, err, "lock not obtained")
			return
		}
		w.Emit(Event{Kind: KindWorkStart, Res: "P"})
		// The pause outlasts the validity and lasts until w07 is inside:
		// on a busy machine w07's acquisition may take longer than planned.
		w.PauseUntil(ctx, ttl+ttl/2, inside, "stop-the-world pause past the validity")
		w.Emit(Event{Kind: KindWorkEnd, Res: "P"})
		releaseQuietly(ctx, l)
		w.Done(true, "", "woke up a stale holder: its validity had ended, yet it acted as if it held the lock")
	}()
	env.Clock().Sleep(ctx, ttl/4)
	hold(env, ws[7], redlockFor(ws[7], full, poll), "P", ttl, env.Params.Work.D(), inside)
	wg.Wait()
	return ctx.Err()
}

// hold acquires lock:res, works inside for work and releases; got, if
// given, hears whether the lock was obtained, once w is inside.
func hold(env *Env, w *Worker, l lock.Locker, res string, ttl, work time.Duration, got ...chan bool) {
	ctx := w.ctx
	lease, err := l.Acquire(ctx, env.Store.Key("lock:"+res), ttl)
	if err != nil {
		for _, g := range got {
			g <- false
		}
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	w.Emit(Event{Kind: KindWorkStart, Res: res})
	for _, g := range got {
		g <- true
	}
	err = w.Sleep(ctx, work)
	w.Emit(Event{Kind: KindWorkEnd, Res: res})
	releaseQuietly(ctx, lease)
	if err != nil {
		w.Done(false, FailCancel, "interrupted")
		return
	}
	w.Done(true, "", "")
}

// cutOff returns n clients that cannot reach anything: how a partitioned
// worker sees the nodes on the other side.
func cutOff(env *Env, n int) []*redis.Client {
	cs := make([]*redis.Client, n)
	for i := range cs {
		cs[i] = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 20 * time.Millisecond,
			MaxRetries: -1, DialerRetries: 1, Protocol: 2, DisableIdentity: true})
	}
	return cs
}
