package linear

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"

	"github.com/anishathalye/porcupine"
)

// rueidis is the header of a rueidislock run: a library whose delete and
// extension are bounded by the lock's own wall-clock deadline.
var rueidis = event.Header{Scenario: "ttl-expiry", Strategy: "rueidislock"}

func releaseFailed(w int32, tok string, o event.Outcome, call, t float64) event.Event {
	e := ev(event.KindReleaseFailed, w, "lock:stock", call, t).WithOK(false)
	e.Token, e.Outcome = tok, o
	return e
}

func renewFailed(w int32, tok string, o event.Outcome, ttl, call, t float64) event.Event {
	e := ev(event.KindRenewFailed, w, "lock:stock", call, t)
	e.Token, e.Outcome, e.TTL, e.Has = tok, o, ms(ttl), e.Has|event.HasTTL
	return e
}

// A delete the library gave up on at the lock's deadline, sent or not,
// and a later denial: the key may still have been there. Logged as an
// answered refusal (what the log said before gave_up), it read as the
// key let go, and the denial as impossible: the false alarm of a CORRECT
// run. Given up on, it is either.
func TestLeaseModelTakesAGivenUpReleaseEitherWay(t *testing.T) {
	t.Parallel()
	history := func(o event.Outcome) []event.Event {
		return []event.Event{
			acquired(0, "lock:stock", "a", 100, 0, 1),
			releaseFailed(0, "a", o, 95, 99),
			ev(event.KindDenied, 1, "lock:stock", 100, 100.5),
			acquired(1, "lock:stock", "b", 100, 110, 111),
		}
	}
	if got := leaseResult(t, rueidis, "lock:stock", history(event.OutcomeOK)...); got != porcupine.Illegal {
		t.Fatalf("as an answered refusal: %v; the case no longer shows the false alarm", got)
	}
	if got := leaseResult(t, rueidis, "lock:stock", history(event.OutcomeGaveUp)...); got != porcupine.Ok {
		t.Errorf("given up on: %v, want linearizable", got)
	}
	// Deleted, perhaps: the next holder may come at once.
	if got := leaseResult(t, rueidis, "lock:stock",
		acquired(0, "lock:stock", "a", 100, 0, 1),
		releaseFailed(0, "a", event.OutcomeGaveUp, 40, 42),
		acquired(1, "lock:stock", "b", 100, 45, 46),
	); got != porcupine.Ok {
		t.Errorf("a holder right after a delete given up on: %v, want linearizable", got)
	}
}

// An extension the library gave up on may have moved the key's expiry:
// a denial past the old one is then in time.
func TestLeaseModelTakesAGivenUpRenewalEitherWay(t *testing.T) {
	t.Parallel()
	history := func(o event.Outcome) []event.Event {
		return []event.Event{
			acquired(0, "lock:stock", "a", 100, 0, 1),
			renewFailed(0, "a", o, 100, 50, 60),
			ev(event.KindDenied, 1, "lock:stock", 150, 151),
		}
	}
	if got := leaseResult(t, rueidis, "lock:stock", history(event.OutcomeOK)...); got != porcupine.Illegal {
		t.Fatalf("as an answered failure: %v; the case no longer shows the false alarm", got)
	}
	if got := leaseResult(t, rueidis, "lock:stock", history(event.OutcomeGaveUp)...); got != porcupine.Ok {
		t.Errorf("given up on: %v, want linearizable", got)
	}
}

// What a call given up on may have done is its own key's: a delete of
// token a never frees b's lock, and two holders of b's time stay illegal.
func TestLeaseModelStillFindsTwoHoldersPastAGivenUpCall(t *testing.T) {
	t.Parallel()
	got := leaseResult(t, rueidis, "lock:stock",
		acquired(0, "lock:stock", "a", 100, 0, 1),
		acquired(1, "lock:stock", "b", 1000, 150, 151),
		releaseFailed(0, "a", event.OutcomeGaveUp, 160, 165),
		renewFailed(0, "a", event.OutcomeGaveUp, 1000, 166, 170),
		acquired(2, "lock:stock", "c", 1000, 200, 201),
	)
	if got != porcupine.Illegal {
		t.Errorf("a third holder while b surely holds: %v, want illegal", got)
	}
}

// A call the library gave up on is counted as such and said in words; it
// is not a server's failure, so the verdict stays the lock's.
func TestGivenUpCallsKeepTheVerdict(t *testing.T) {
	t.Parallel()
	h := rueidis
	h.Params.Workers = 2
	evs := []event.Event{
		{Kind: event.KindAttempt, Worker: 0, Res: "lock:stock"},
		acquired(0, "lock:stock", "a", 100, 0, 1),
		{Kind: event.KindWorkStart, Worker: 0, Res: "stock", T: ms(2)},
		{Kind: event.KindWorkEnd, Worker: 0, Res: "stock", T: ms(90)},
		renewFailed(0, "a", event.OutcomeGaveUp, 100, 50, 60),
		releaseFailed(0, "a", event.OutcomeGaveUp, 99, 102),
		{Kind: event.KindDone, Worker: 0, T: ms(103), OK: true, Has: event.HasOK},
	}
	for i := range evs {
		evs[i].Seq = int64(i)
		evs[i].Msg = "rueidislock gave up on its own deadline; whether Redis deleted the key is not known"
	}
	s := check.SummarizeWith(scenario.WithTraits(h), check.Slice(evs), check.Words{})
	if !strings.HasPrefix(s.Verdict, "CORRECT") {
		t.Errorf("verdict %q, want CORRECT: a call given up on is not a server's failure", s.Verdict)
	}
	if s.GaveUpOps != 2 || s.GaveUpKinds != "1 renew(s), 1 release(s)" || s.UnansweredOps != 0 || s.ReleaseRefused != 0 {
		t.Errorf("gave up %d (%s), unanswered %d, refused %d; want 2 (1 renew, 1 release), 0, 0", s.GaveUpOps, s.GaveUpKinds, s.UnansweredOps, s.ReleaseRefused)
	}
	if !strings.Contains(s.Detail, "whether Redis deleted the key is not known") {
		t.Errorf("the detail does not say what the library did: %q", s.Detail)
	}
	if box := s.Box(h); !strings.Contains(box, "Library Gave Up") || !strings.Contains(box, "2 (1 renew(s), 1 release(s))") {
		t.Errorf("the results box does not count the calls given up on:\n%s", box)
	}
}

// An acquire whose SET answered OK after the library's validity had run
// out: the library counts no lock, and the key lapses. Logged as a
// denial (what the log said before), it was a denial with nobody holding:
// the false alarm. Given up on, it may have set the key, and the next
// worker's denial is in time.
func TestLeaseModelTakesAGivenUpAcquireEitherWay(t *testing.T) {
	t.Parallel()
	attempt := event.Event{Kind: event.KindAttempt, Worker: 0, Res: "lock:stock", T: ms(10), TTL: ms(100), Has: event.HasTTL}
	denied := ev(event.KindDenied, 0, "lock:stock", 10, 150)
	if got := leaseResult(t, rueidis, "lock:stock", attempt, denied); got != porcupine.Illegal {
		t.Fatalf("as a denial: %v; the case no longer shows the false alarm", got)
	}
	gaveUp := ev(event.KindError, 0, "lock:stock", 10, 150)
	gaveUp.Code, gaveUp.Token, gaveUp.Outcome = "acquire", "a", event.OutcomeGaveUp
	if got := leaseResult(t, rueidis, "lock:stock",
		attempt, gaveUp,
		ev(event.KindDenied, 1, "lock:stock", 151, 152),
		acquired(1, "lock:stock", "b", 100, 300, 301),
	); got != porcupine.Ok {
		t.Errorf("given up on: %v, want linearizable", got)
	}
}
