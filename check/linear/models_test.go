package linear

import (
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"

	"github.com/anishathalye/porcupine"
)

// ms is a virtual time in milliseconds.
func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// ev is an event of worker w at t (ms) on res; call < 0 leaves it unstamped.
func ev(kind event.Kind, w int32, res string, call, t float64) event.Event {
	e := event.Event{Kind: kind, Worker: w, Res: res, T: ms(t)}
	if call >= 0 {
		e = e.WithCall(ms(call))
	}
	return e
}

func acquired(w int32, res, tok string, ttl, call, t float64) event.Event {
	e := ev(event.KindAcquired, w, res, call, t)
	e.Token, e.TTL, e.Has = tok, ms(ttl), e.Has|event.HasTTL
	return e
}

func vote(w int32, res, tok string, node int16, ok bool, call, t float64) event.Event {
	e := ev(event.KindVote, w, res, call, t).WithOK(ok)
	e.Token, e.TTL, e.Node, e.Has = tok, ms(1000), node, e.Has|event.HasTTL|event.HasNode
	return e
}

// leaseResult is check's answer on one lock key of a hand-made history.
func leaseResult(t *testing.T, h event.Header, res string, evs ...event.Event) porcupine.CheckResult {
	t.Helper()
	for i := range evs {
		evs[i].Seq = int64(i)
	}
	for _, p := range CheckLog(scenario.WithTraits(h), check.Slice(evs), 5*time.Second, false).parts {
		if p.model == "lease" && p.res == res {
			return p.result
		}
	}
	t.Fatalf("no lease history of %s", res)
	return porcupine.Unknown
}

// Histories a correct store produces, that the lease model once called
// illegal: each is linearizable now.
func TestLeaseModelKnowsWhatTheLogCannotSay(t *testing.T) {
	t.Parallel()
	safe := event.Header{Scenario: "oversell", Strategy: "safe"}
	for name, c := range map[string]struct {
		h   event.Header
		res string
		evs []event.Event
	}{
		// The TTL ran from when the server set the key, as late as the
		// acquire's return: a denial 73 ms past call+TTL is in time.
		"a TTL runs from somewhere inside its acquire": {safe, "lock:stock", []event.Event{
			acquired(0, "lock:stock", "a", 100, 0, 90),
			ev(event.KindDenied, 1, "lock:stock", 173, 175),
			acquired(1, "lock:stock", "b", 100, 191, 192),
		}},
		// All at once: one acquire of two keys, stamped by none; its invoke
		// is after the worker's previous event.
		"a multi-key acquire without a call stamp": {safe, "lock:A", []event.Event{
			{Kind: event.KindAttempt, Worker: 1, Res: "lock:A", T: ms(10)},
			ev(event.KindDenied, 2, "lock:A", 20, 21),
			acquired(1, "lock:A", "b", 500, -1, 52),
		}},
		// Too few votes on a free lock: a split, not a holder.
		"a Redlock denial with the lock free": {event.Header{Strategy: "redlock"}, "lock:R", []event.Event{
			vote(0, "lock:R", "a", 0, true, 0, 1), vote(0, "lock:R", "a", 1, false, 0, 1), vote(0, "lock:R", "a", 2, false, 0, 1),
			vote(1, "lock:R", "b", 0, false, 0, 1), vote(1, "lock:R", "b", 1, true, 0, 1), vote(1, "lock:R", "b", 2, true, 0, 1),
			acquired(1, "lock:R", "b", 900, 0, 2),
			ev(event.KindDenied, 0, "lock:R", 0, 2),
		}},
		// The denied worker's vote on node 0 was undone, unlogged: node 0
		// is free for the next.
		"a Redlock's partial votes undone": {event.Header{Strategy: "redlock"}, "lock:R@node0", []event.Event{
			vote(0, "lock:R", "a", 0, true, 0, 1), vote(0, "lock:R", "a", 1, false, 0, 1), vote(0, "lock:R", "a", 2, false, 0, 1),
			ev(event.KindDenied, 0, "lock:R", 0, 3),
			vote(2, "lock:R", "c", 0, true, 4, 5),
		}},
		// DEL deletes whoever's lock: naive's late release frees the next holder's.
		"naive's DEL of another's lock": {event.Header{Strategy: "naive"}, "lock:B", []event.Event{
			acquired(0, "lock:B", "a", 10, 0, 1),
			acquired(1, "lock:B", "b", 100, 12, 13),
			ev(event.KindRelease, 0, "lock:B", 20, 21).WithOK(true),
			acquired(2, "lock:B", "c", 100, 22, 23),
		}},
		// Crashed between SETNX and EXPIRE: held forever, though never logged.
		"naive's orphaned SETNX": {event.Header{Strategy: "naive"}, "lock:A", []event.Event{
			{Kind: event.KindAttempt, Worker: 0, Res: "lock:A", T: 0},
			{Kind: event.KindCrash, Worker: 0, T: ms(1)},
			ev(event.KindDenied, 1, "lock:A", 50, 51),
			ev(event.KindDenied, 1, "lock:A", 5000, 5001),
		}},
		// etcd's lease is kept alive beyond its TTL by keep-alives the log
		// does not show.
		"an etcd lease kept alive": {event.Header{Strategy: "etcd"}, "lock:stock", []event.Event{
			acquired(0, "lock:stock", "a", 1000, 0, 5),
			ev(event.KindDenied, 1, "lock:stock", 9000, 9100),
			ev(event.KindRelease, 0, "lock:stock", 9200, 9300).WithOK(true),
			acquired(1, "lock:stock", "a", 1000, 9400, 9500),
		}},
	} {
		if got := leaseResult(t, c.h, c.res, c.evs...); got != porcupine.Ok {
			t.Errorf("%s: %v, want linearizable", name, got)
		}
	}
}

// What the model allows is bounded: a lock taken while surely held is
// still illegal — an invoke missing or stamped 0 is after the worker's
// previous event, not at t=0, where it would have found the lock free.
func TestLeaseModelStillFindsTwoHolders(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]event.Header{"flock": {Strategy: "flock"}, "safe": {Strategy: "safe"}} {
		second := acquired(1, "lock:stock", "b", 5000, -1, 30)
		zero := acquired(1, "lock:stock", "b", 5000, 0, 30)
		for how, e := range map[string]event.Event{"no call": second, "call 0": zero} {
			got := leaseResult(t, h, "lock:stock",
				ev(event.KindAttempt, 1, "lock:stock", -1, 0),
				acquired(0, "lock:stock", "a", 5000, 0, 2),
				ev(event.KindBackoff, 1, "lock:stock", -1, 20),
				e)
			if got != porcupine.Illegal {
				t.Errorf("%s, %s: a second holder while the first surely held: %v", name, how, got)
			}
		}
	}
}
