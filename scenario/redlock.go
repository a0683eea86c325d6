package scenario

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/store"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
)

var redlockScenario = &Scenario{
	Name:     "redlock",
	Speed:    0.5,
	speedFor: redlockSpeed, // 5.6 s: 11 s
	Title:    "Redlock under faults: quorum, clock jumps and slews, failovers, pauses, fences",
	Watch:    "the per-node votes, the two holders at once after each fault, and the fence that stops the stale one",
	Explain: "Six parts on five nodes, each on its own lock, two workers each (--part runs one). 1 quorum: two " +
		"nodes down, the quorum (3) still grants; a third down and it is denied. 2 clock: a holder has a bare " +
		"majority (nodes 0–2; 3 and 4 are cut off from it); node 2's clock jumps past the TTL (--clock slew: " +
		"gains the same amount gradually over the TTL), the key lapses there, and the other worker gets nodes " +
		"2–4. 3 failover: the same with node 2's primary failing over to its asynchronous replica, which had not " +
		"yet received the write. 4 pause: a holder on all five pauses past the lock's validity; the other " +
		"acquires and writes; the stale holder wakes and writes the record it read before — a lost update. " +
		"5 fence: the same pause, but each node counts a fence with its vote, the lock's fence is the " +
		"majority's highest, and the record rejects the stale holder's older fence (Kleppmann's fix). 6 restart: " +
		"the bare majority again, node 2 restarting without persistence (empty) while the key is valid. " +
		"--lock redsync-quorum plays the parts with go-redsync's Mutex, unmodified, each node's answer to " +
		"its SET NX a vote in the log; in real time (it reads the wall clock), and without part 5 (it has no fencing token).",
	Source:     "the locking-patterns article (Redlock); Kleppmann, \"How to do distributed locking\"; antirez, \"Is Redlock safe?\"; the Valkey example (failover)",
	Strategies: []string{"redlock", "redsync-quorum"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Nodes, p.TTL, p.Work = 12, 5, event.Millis(time.Second), event.Millis(300*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(50*time.Millisecond), 60
		p.Part, p.Clock = "all", "jump"
	}),
	Uses:    []string{"ttl", "work", "retry-base", "part", "clock"},
	Cast:    12,
	castFor: func(strategy string, p event.Params) int { return 2 * len(redlockParts(strategy, p)) },
	refuse:  refuseRedlockPart,
	run:     runRedlock,
	beats:   redlockBeats,
	headings: func(strategy string, p event.Params) []string {
		// Each part's heading, said by the run, then the part's own beats.
		var ids []string
		for _, part := range redlockParts(strategy, p) {
			one := p
			one.Part = event.RedlockParts[part].Name
			ids = append(ids, fmt.Sprintf("part-%d", part+1))
			for _, b := range redlockBeats(strategy, one) {
				ids = append(ids, b.ID)
			}
		}
		return ids
	},
}

// redlockParts are the indices (0-based) of the parts p selects that
// strategy plays: all of them but those it cannot (redlockCannot).
func redlockParts(strategy string, p event.Params) []int {
	if i := slices.Index(event.ChoiceNames(event.RedlockParts), p.Part); i >= 0 {
		return []int{i}
	}
	var all []int
	for i := range event.RedlockParts {
		if redlockCannot(strategy, i) == "" {
			all = append(all, i)
		}
	}
	return all
}

// redlockCannot says why strategy cannot play part i honestly, "" when it
// can. redsync's Mutex (redsync-quorum) plays every part whose faults are
// the nodes' (down, a clock moved, a failover, a restart) or the holder's
// (a pause): its own code asks the nodes and reads its own clock. It has
// no fencing token, so the fence part is not its to play.
func redlockCannot(strategy string, i int) string {
	if strategy == "redsync-quorum" && event.RedlockParts[i].Name == "fence" {
		return "fence cannot be played by redsync-quorum: redsync's Mutex has no fencing token (its value is random, not a counter the nodes count); play it with --lock redlock"
	}
	return ""
}

// refuseRedlockPart refuses a part the strategy cannot play.
func refuseRedlockPart(strategy string, p event.Params) *event.ParamError {
	if i := slices.Index(event.ChoiceNames(event.RedlockParts), p.Part); i >= 0 {
		if why := redlockCannot(strategy, i); why != "" {
			return &event.ParamError{Param: "part", Msg: why}
		}
	}
	return nil
}

// redlockRun is one run of the Redlock scenario: its nodes, the clients
// a partitioned worker sees, and its lock-making.
type redlockRun struct {
	env           *Env
	full, partial []lock.Client
	ttl, work     time.Duration
	once, poll    lock.Retry
}

// lock is w's lock on clients: locklab's Redlock, or the library the
// run is of (redsync-quorum: redsync's Mutex on those nodes, unmodified).
func (r *redlockRun) lock(w *Worker, clients []lock.Client, retry lock.Retry) lock.Locker {
	if s := r.env.Strategy; s != "redlock" {
		l, err := lock.NewOn(s, lock.Servers{Redis: clients}, w.lockOptions(retry), nil)
		if err != nil {
			return brokenLock{s, err}
		}
		return l
	}
	return lock.NewRedlock(clients, w.lockOptions(retry))
}

// brokenLock is a library lock that could not be made: every acquire
// says why.
type brokenLock struct {
	name string
	err  error
}

func (b brokenLock) Strategy() string { return b.name }
func (b brokenLock) Acquire(context.Context, string, time.Duration) (*lock.Lease, error) {
	return nil, b.err
}
func (b brokenLock) TryAcquire(context.Context, string, time.Duration) (*lock.Lease, error) {
	return nil, b.err
}

func (r *redlockRun) fencedLock(w *Worker, retry lock.Retry) *lock.Redlock {
	return lock.NewFencedRedlock(r.full, w.lockOptions(retry))
}

func (r *redlockRun) heading(part int, say string) {
	r.env.Emit(event.Event{Kind: event.KindBeat, Code: fmt.Sprintf("part-%d", part+1),
		Msg: fmt.Sprintf("Part %d of %d: %s", part+1, len(event.RedlockParts), say)})
}

func runRedlock(ctx context.Context, env *Env) error {
	nodes := env.Store.Nodes()
	if len(nodes) < 5 {
		env.Emit(event.Event{Kind: event.KindBeat, Msg: fmt.Sprintf("redlock needs 5 nodes, the store has %d: give five --redis URLs or use the embedded store", len(nodes))})
		return nil
	}
	parts := redlockParts(env.Strategy, env.Params)
	for _, i := range parts {
		env.Emit(event.Event{Kind: event.KindInit, Res: redlockRes[i]})
	}
	cut := cutOff(env, 2) // nodes 3 and 4 as a partitioned worker sees them: unreachable
	defer func() {
		for _, c := range cut {
			c.Close()
		}
	}()
	r := &redlockRun{env: env, ttl: env.Params.TTL.D(), work: env.Params.Work.D(),
		once: lock.Retry{}, poll: env.Params.RetryPolicy()}
	r.full = lock.Clients(env.Store.Clients())
	r.partial = append(append([]lock.Client(nil), r.full[:3]...), cut[0], cut[1])
	for k, i := range parts {
		if ctx.Err() != nil {
			break
		}
		a, b := env.worker(int32(2*k)), env.worker(int32(2*k+1))
		switch i {
		case 0:
			r.quorum(a, b)
		case 1, 2, 5:
			r.bareMajority(ctx, i, a, b)
		case 3, 4:
			r.stale(ctx, i, a, b)
		}
	}
	return ctx.Err()
}

// redlockRes are the parts' resources; each part's lock is lock:<res>.
var redlockRes = []string{"Q", "J", "F", "P", "S", "R"}

// quorum: two nodes down, then a third.
func (r *redlockRun) quorum(a, b *Worker) {
	env, nodes := r.env, r.env.Store.Nodes()
	r.heading(0, "two of five nodes go down — does a quorum of three still grant?")
	_, _ = fault(env, nodes[3], "down", 0)
	_, _ = fault(env, nodes[4], "down", 0)
	hold(env, a, r.lock(a, r.full, r.once), "Q", r.ttl, r.work)
	_, _ = fault(env, nodes[2], "down", 0)
	hold(env, b, r.lock(b, r.full, r.once), "Q", r.ttl, r.work)
	for _, i := range []int{2, 3, 4} {
		_, _ = fault(env, nodes[i], "up", 0)
	}
}

// bareMajority: a holds nodes 0–2 only; node 2 loses its copy of the key
// (its clock moves, or it fails over), and b, which reaches nodes 2–4,
// polls for the lock.
func (r *redlockRun) bareMajority(ctx context.Context, part int, a, b *Worker) {
	env, node := r.env, r.env.Store.Nodes()[2]
	res, kind := redlockRes[part], "failover"
	switch {
	case part == 2:
		r.heading(part, "node 2's primary fails over to a replica that missed the last writes")
		// Node 2 gets an asynchronous replica trailing it by a TTL: while a
		// lock granted on node 2 is valid, its replica has not received it,
		// however late a busy machine makes the failover.
		_ = node.Replicate(r.ttl) // unsupported on a real server: the failover says so
	case part == 5:
		kind = "restart"
		r.heading(part, "node 2 restarts without persistence: it comes back empty, its copy of the key gone")
	case env.Params.Clock == "slew":
		kind = "slew"
		r.heading(part, fmt.Sprintf("node 2's clock slews %s forward over the next %s — the jump's amount, gained gradually (antirez: slew, don't jump)", ms(r.ttl), ms(r.ttl)))
	default:
		kind = "jump"
		r.heading(part, "node 2's clock jumps past the TTL")
	}
	got, in := make(chan bool, 1), make(chan bool, 1)
	g := clock.NewGroup(env.Clock())
	g.Go(ctx, check.WorkerName(a.ID), func(context.Context) {
		// a polls: on a busy machine a vote may come too late to count.
		r.holdValid(a, r.lock(a, r.partial, r.poll), res, got, in)
	})
	if ok, _, _ := recv(ctx, got); ok {
		env.Clock().Sleep(ctx, r.work/2)
		_, _ = fault(env, node, kind, r.ttl)
		hold(env, b, r.lock(b, r.full, r.poll), res, r.ttl, r.work, in)
	}
	g.Wait(ctx)
}

// holdValid is a's part when a bare majority loses a node's copy: it
// acquires lock:res and works for as long as its lock is valid — until
// b is inside beside it, or has given up, or the validity Redlock computed
// runs out, whichever comes first. b can get in only while a is valid if
// a node lost a's key: two holders then are the fault's doing, however
// slow the machine, and without the fault there is one holder at a time.
func (r *redlockRun) holdValid(a *Worker, l lock.Locker, res string, got chan<- bool, in <-chan bool) {
	ctx := a.ctx
	lease, err := l.Acquire(ctx, r.env.Store.Key("lock:"+res), r.ttl)
	if err != nil {
		got <- false
		a.Fail(ctx, err, "lock not obtained")
		return
	}
	a.Emit(event.Event{Kind: event.KindWorkStart, Res: res})
	got <- true
	err = sleepOrRecv(ctx, a, lease.Validity, in)
	a.Emit(event.Event{Kind: event.KindWorkEnd, Res: res})
	releaseQuietly(ctx, lease)
	if err != nil {
		a.Done(false, check.FailCancel, "interrupted")
		return
	}
	a.Done(true, "", "")
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
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: res})
	for _, g := range got {
		g <- true
	}
	err = w.Sleep(ctx, work)
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: res})
	releaseQuietly(ctx, lease)
	if err != nil {
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	w.Done(true, "", "")
}

// cutOff returns n clients that cannot reach anything: how a partitioned
// worker sees the nodes on the other side.
func cutOff(env *Env, n int) []store.Redis { return env.Store.Unreachable(n) }
