package linear

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock/trait"

	"github.com/anishathalye/porcupine"
)

// The lease histories of `locklab check`: each lock key's operations, as
// porcupine takes them, built from a log with what the log cannot say
// made explicit — an invoke time missing, an attempt never answered, a
// Redlock's partial votes undone and its release spread over the nodes —
// so that a history the store really produced is never called illegal.

// pending is the return of an operation never answered: it may take effect
// at any time after its call, or never (porcupine may place it last).
const pending = math.MaxInt64 / 4

// lockTraits is what a strategy's lock is, as far as the model needs it.
type lockTraits struct {
	// keepAlive: the lock is kept beyond its TTL by renewals the log does
	// not show (etcd's lease keep-alive, a row's expiry on the database's
	// clock): it may be held at any time until released.
	keepAlive bool
	// early is how much sooner than its TTL the lock may lapse
	// (memcached counts whole seconds).
	early int64 // µs
	// anyDel: release is an unconditional DEL of whoever's lock (naive).
	anyDel bool
	// noTTL: the lock is held until released, or its holder's session ends
	// (a crash ends it).
	noTTL bool
	// waiters: a try is refused while another waiter's key is first, even
	// with nobody holding the lock (etcd's mutex puts the waiter's key, reads
	// who is first, and takes its key back when it is not): a refusal says
	// nothing about a holder.
	waiters bool
}

// traitsOf are the traits of the lock strategy of a log, for key res.
// They are read from the log's header (the registry's, for a log written
// before headers recorded them), the lock of key res when it is one of
// its own (trade-offs' one lock per store).
func traitsOf(h event.Header, res string) lockTraits {
	t, ok := h.TraitsOf(res)
	if !ok {
		return lockTraits{}
	}
	lt := lockTraits{anyDel: t.ReleaseAny, waiters: t.Queued,
		keepAlive: t.Renewal == trait.RenewalKeepAlive || t.OwnClock,
		noTTL:     t.Excludes && !t.HasTTL()}
	// A server that counts whole seconds may let a TTL lapse up to one
	// sooner; a millisecond's grain is the log's own.
	if t.Expiry == trait.ExpiryTTL && t.Unit > 1 {
		lt.early = t.Unit.D().Microseconds()
	}
	return lt
}

// leaseBuilder turns a log's lock events into lease operations per key,
// one event at a time, handing each operation to put as it is made.
type leaseBuilder struct {
	h      event.Header
	put    func(key string, op porcupine.Operation)
	keys   map[string]bool // the keys an operation went to
	quorum map[string]bool // keys whose lock is a quorum of per-node keys
	prevT  lastTimes       // each worker's last event, µs
	open   map[attempt]asked
	votes  map[attempt]string      // the token of a worker's last vote on a key
	traits map[string]lockTraits   // each key's, as traitsOf reads them
	nodes  map[string]map[int]bool // a quorum key's nodes
	undone map[string]*[2]int64    // key|token: a quorum release's span over its nodes
	order  []string                // undone's keys, in the log's order
	lastT  int64
}

func newLeaseBuilder(h event.Header, put func(string, porcupine.Operation)) *leaseBuilder {
	return &leaseBuilder{h: h, put: put, keys: map[string]bool{}, quorum: map[string]bool{}, prevT: lastTimes{far: map[int32]int64{}},
		open: map[attempt]asked{}, votes: map[attempt]string{}, traits: map[string]lockTraits{}, nodes: map[string]map[int]bool{}, undone: map[string]*[2]int64{}}
}

// held is how many entries the builder keeps between events.
func (b *leaseBuilder) held() int {
	return len(b.keys) + len(b.open) + len(b.votes) + len(b.undone) + b.prevT.n
}

// vote learns from a vote that its key is a quorum's, and on which nodes.
// A quorum's attempt is answered by its votes, not the attempt itself:
// one left open before its first vote was seen is closed.
func (b *leaseBuilder) vote(e *event.Event) {
	if !b.quorum[e.Res] {
		b.quorum[e.Res] = true
		for _, k := range sortedAttempts(b.open) {
			if b.open[k].Res == e.Res {
				delete(b.open, k)
			}
		}
	}
	if b.nodes[e.Res] == nil {
		b.nodes[e.Res] = map[int]bool{}
	}
	b.nodes[e.Res][int(e.Node)] = true
}

// span is e's interval (µs): from its call — when the log has none, from
// the worker's previous event, the earliest it can have been sent — to
// its return.
func (b *leaseBuilder) span(e *event.Event) (int64, int64) {
	ret := e.T.Microseconds()
	if e.Has&event.HasCall != 0 && e.Call > 0 {
		return e.Call.Microseconds(), ret
	}
	return min(b.prevT.get(e.Worker), ret), ret
}

func (b *leaseBuilder) add(key string, e *event.Event, in leaseIn, ok bool, call, ret int64) {
	t, known := b.traits[key]
	if !known {
		res, _, _ := strings.Cut(key, "@node")
		t = traitsOf(b.h, res)
		b.traits[key] = t
	}
	in.call, in.ret, in.traits = call, ret, t
	if e != nil {
		in.worker = e.Worker
	}
	in.quorum = b.quorum[key]
	if in.holder == "" {
		in.holder = in.token
	}
	if in.holder == "" && e != nil {
		in.holder = check.WorkerName(e.Worker) // a lock without a token is its worker's
	}
	client := 0
	if e != nil {
		client = int(max(e.Worker, -1) + 1)
	}
	b.keys[key] = true
	b.put(key, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: ok, Return: ret})
}

// event takes the log's next event.
func (b *leaseBuilder) event(e event.Event) {
	call, ret := b.span(&e)
	b.prevT.set(e.Worker, ret)
	b.lastT = max(b.lastT, ret)
	key := e.Res
	if e.Has&event.HasNode != 0 {
		key = e.Res + "@node" + strconv.Itoa(int(e.Node))
	}
	ttl := e.TTL.Microseconds()
	attempt := attempt{e.Worker, e.Res}
	switch e.Kind {
	case event.KindAttempt:
		if !b.quorum[e.Res] {
			b.open[attempt] = asked{Res: e.Res, T: e.T, TTL: e.TTL, Worker: e.Worker}
		}
	case event.KindAcquired:
		delete(b.open, attempt)
		b.add(key, &e, leaseIn{op: "acquire", token: e.Token, ttl: ttl}, true, call, ret)
	case event.KindVote:
		if e.Has&event.HasNode != 0 {
			b.vote(&e)
		}
		b.votes[attempt] = e.Token
		switch {
		case e.Outcome == event.OutcomeOK: // a node that answered; errors are not the node's state
			b.add(key, &e, leaseIn{op: "acquire", token: e.Token, ttl: ttl}, e.OK, call, ret)
		case e.Outcome.MayHaveHappened(): // unanswered, or given up on by its library: it may have set the key
			b.add(key, &e, leaseIn{op: "maybe", token: e.Token, ttl: ttl}, true, call, pending)
		}
	case event.KindDenied:
		delete(b.open, attempt)
		b.add(key, &e, leaseIn{op: "acquire"}, false, call, ret)
		b.undo(e, call, ret)
	case event.KindError:
		if a, ok := b.open[attempt]; ok {
			delete(b.open, attempt)
			if e.Outcome.MayHaveHappened() { // the acquire may have happened
				b.add(key, &e, leaseIn{op: "maybe", ttl: a.TTL.Microseconds()}, true, a.T.Microseconds(), pending)
			}
		}
		b.undo(e, call, ret)
	case event.KindRelease, event.KindReleaseFailed:
		if e.Kind == event.KindReleaseFailed && e.Outcome != event.OutcomeOK {
			// A release that may or may not have happened (unanswered, or
			// given up on by its library) may have deleted its own key.
			if e.Outcome.MayHaveHappened() && e.Token != "" && !(e.Has&event.HasNode != 0 && b.quorum[e.Res]) {
				b.add(key, &e, leaseIn{op: "maybe-release", token: e.Token}, true, call, ret)
			}
			break
		}
		if e.Has&event.HasNode != 0 && b.quorum[e.Res] {
			b.spread(e.Res, e.Token, call, ret)
		}
		b.add(key, &e, leaseIn{op: "release", token: e.Token}, e.Kind == event.KindRelease, call, ret)
	case event.KindRenewed:
		b.add(key, &e, leaseIn{op: "renew", token: e.Token, ttl: ttl}, true, call, ret)
	case event.KindRenewFailed:
		// A renewal that may or may not have happened may have moved its
		// own key's expiry to its TTL past the return.
		if e.Outcome.MayHaveHappened() && e.Token != "" && ttl > 0 {
			b.add(key, &e, leaseIn{op: "maybe-renew", token: e.Token, ttl: ttl}, true, call, ret)
		}
	case event.KindCrash:
		// An attempt the crash cut off may have taken the lock; a lock
		// bound to the session is let go (a TTL lock lapses on its own).
		for _, k := range sortedAttempts(b.open) {
			if a := b.open[k]; a.Worker == e.Worker {
				delete(b.open, k)
				b.add(a.Res, a.event(), leaseIn{op: "maybe", holder: "orphan of " + k.String(), ttl: a.TTL.Microseconds()}, true, a.T.Microseconds(), pending)
			}
		}
		for _, k := range sortedKeys(b.keys) {
			b.add(k, &e, leaseIn{op: "session-end"}, true, ret, pending)
		}
	}
}

// asked is what an attempt not answered yet needs kept: a small value
// (a map keeps a large one apart, allocated for each attempt).
type asked struct {
	Res    string
	T, TTL time.Duration
	Worker int32
}

// event is the attempt as the event the operations it makes name.
func (a asked) event() *event.Event {
	return &event.Event{Kind: event.KindAttempt, Worker: a.Worker, Res: a.Res, T: a.T, TTL: a.TTL, Has: event.HasTTL}
}

// lastTimes is each worker's last time: in a slice for the workers a log
// can name (−1 … 65534), in a map for any other.
type lastTimes struct {
	t     []int64
	known []bool
	far   map[int32]int64
	n     int // workers with a time
}

func (l *lastTimes) get(w int32) int64 {
	if i := int(w) + 1; i >= 0 && i < len(l.t) {
		return l.t[i]
	}
	return l.far[w]
}

func (l *lastTimes) set(w int32, t int64) {
	i := int(w) + 1
	if i < 0 || i >= 1<<16 {
		if _, ok := l.far[w]; !ok {
			l.n++
		}
		l.far[w] = t
		return
	}
	if i >= len(l.t) {
		l.t = append(l.t, make([]int64, i+1-len(l.t))...)
		l.known = append(l.known, make([]bool, i+1-len(l.known))...)
	}
	if !l.known[i] {
		l.known[i], l.n = true, l.n+1
	}
	l.t[i] = t
}

// attempt is a worker's attempt on a lock key.
type attempt struct {
	worker int32
	res    string
}

// String names the attempt: "3@lock:stock".
func (a attempt) String() string { return strconv.Itoa(int(a.worker)) + "@" + a.res }

// sortedAttempts are m's attempts in the order of their names.
func sortedAttempts[V any](m map[attempt]V) []attempt {
	type named struct {
		a    attempt
		name string
	}
	ns := make([]named, 0, len(m))
	for a := range m {
		ns = append(ns, named{a, a.String()})
	}
	slices.SortFunc(ns, func(x, y named) int { return strings.Compare(x.name, y.name) })
	out := make([]attempt, len(ns))
	for i, n := range ns {
		out[i] = n.a
	}
	return out
}

// undo adds, after a Redlock quorum denied (or failed), the quiet release
// of the worker's partial votes on every node: between its start and the
// denial's return.
func (b *leaseBuilder) undo(e event.Event, call, ret int64) {
	if !b.quorum[e.Res] || e.Has&event.HasNode != 0 {
		return
	}
	tok := b.votes[attempt{e.Worker, e.Res}]
	if tok == "" {
		return
	}
	for _, n := range slices.Sorted(maps.Keys(b.nodes[e.Res])) {
		b.add(fmt.Sprintf("%s@node%d", e.Res, n), &e, leaseIn{op: "undo", token: tok}, true, call, ret)
	}
}

// spread widens the span over which a Redlock lock's release went to its
// nodes: the quorum lock is let go somewhere inside.
func (b *leaseBuilder) spread(res, tok string, call, ret int64) {
	k := res + "|" + tok
	s := b.undone[k]
	if s == nil {
		s = &[2]int64{call, ret}
		b.undone[k] = s
		b.order = append(b.order, k)
	}
	s[0], s[1] = min(s[0], call), max(s[1], ret)
}

// done ends the histories: attempts never answered may have taken the
// lock; each quorum lock is let go where its nodes were.
func (b *leaseBuilder) done() {
	for _, k := range b.order {
		res, tok, _ := strings.Cut(k, "|")
		s := b.undone[k]
		b.add(res, nil, leaseIn{op: "undo", token: tok}, true, s[0], s[1])
	}
	for _, k := range sortedAttempts(b.open) {
		a := b.open[k]
		b.add(a.Res, a.event(), leaseIn{op: "maybe", holder: "unanswered " + k.String(), ttl: a.TTL.Microseconds()}, true, a.T.Microseconds(), pending)
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// isLockOp says an operation is a lock's, not only a session's end: a key
// with none of them held no lock.
func isLockOp(o porcupine.Operation) bool { return o.Input.(leaseIn).op != "session-end" }
