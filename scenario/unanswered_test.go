package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// A node that stops answering for a while leaves renewals (and whatever
// else was in flight) with no answer: whether they happened is unknown,
// so the run is INDETERMINATE, with the operations named — not CORRECT.
func TestUnansweredRenewalsMakeTheRunIndeterminate(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := event.Params{Workers: 10, Stock: 10, Retry: "full-jitter", MaxRetries: 10,
		TTL: event.Millis(50 * time.Millisecond), Delay: event.Millis(100 * time.Millisecond),
		RetryBase: event.Millis(100 * time.Millisecond), RetryCap: event.Millis(5 * time.Second), Nodes: 1}
	pause := scenario.Fault{Kind: scenario.FaultNodePause}
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "watchdog", Seed: 9, Params: p,
		Faults: []scenario.Timed{{At: 120 * time.Millisecond, Fault: pause}, {At: 400 * time.Millisecond, Fault: pause}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Wait()
	evs := r.Log.Events()
	beyond := 0
	for _, e := range evs {
		if e.Outcome == event.OutcomeIndeterminate && e.Kind != event.KindError {
			beyond++
		}
	}
	if beyond == 0 {
		t.Fatalf("no operation outside an error event went unanswered; the fault did not bite")
	}
	s := r.Summary()
	if !strings.HasPrefix(s.Verdict, "INDETERMINATE") || !strings.Contains(s.Verdict, "renew(s)") {
		t.Errorf("verdict %q, want INDETERMINATE naming the renewals", s.Verdict)
	}
	if strings.Contains(s.Detail, "busy lock") {
		t.Errorf("unanswered operations called a busy lock: %s", s.Detail)
	}
	if tl := check.TallyOf(check.Slice(evs)); tl.Unanswered(check.OpKind("renew")) == 0 {
		t.Errorf("the tally counts no unanswered renewal")
	}
	t.Logf("%s — %s", s.Verdict, s.Detail)
}

// A crafted log: one vote and one renewal unanswered, nothing else wrong.
func TestUnansweredVotesAndRenewalsInALog(t *testing.T) {
	h := event.Header{Scenario: "oversell", Strategy: "redlock", Params: event.Params{Workers: 1, Stock: 1, Nodes: 3}}
	ev := func(k event.Kind, f func(*event.Event)) event.Event {
		e := event.Event{Worker: 0, Kind: k, Res: "lock:stock"}
		if f != nil {
			f(&e)
		}
		return e
	}
	evs := check.Slice{
		{Worker: event.System, Kind: event.KindInit, Res: "stock", Stock: 1, Has: event.HasStock},
		ev(event.KindAttempt, nil),
		ev(event.KindVote, func(e *event.Event) { e.Node, e.Has, e.OK = 0, event.HasNode|event.HasOK, true }),
		ev(event.KindVote, func(e *event.Event) { e.Node, e.Has, e.OK = 1, event.HasNode|event.HasOK, true }),
		ev(event.KindVote, func(e *event.Event) {
			e.Node, e.Has, e.Outcome, e.Msg = 2, event.HasNode|event.HasOK, event.OutcomeIndeterminate, "i/o timeout"
		}),
		ev(event.KindAcquired, nil),
		ev(event.KindRenewFailed, func(e *event.Event) { e.Outcome, e.Msg = event.OutcomeIndeterminate, "i/o timeout" }),
		ev(event.KindWorkStart, func(e *event.Event) { e.Res = "stock" }),
		ev(event.KindRead, func(e *event.Event) { e.Res, e.Stock, e.Has = "stock", 1, event.HasStock }),
		ev(event.KindWrite, func(e *event.Event) {
			e.Res, e.Stock, e.Has, e.OK = "stock", 0, event.HasStock|event.HasOK, true
		}),
		ev(event.KindWorkEnd, func(e *event.Event) { e.Res = "stock" }),
		ev(event.KindRelease, nil),
		ev(event.KindDone, func(e *event.Event) { e.OK, e.Has = true, event.HasOK }),
		{Worker: event.System, Kind: event.KindRead, Res: "stock", Stock: 0, Has: event.HasStock},
	}
	s := scenario.Summarize(h, evs)
	if want := "INDETERMINATE — 2 operation(s) unanswered: 1 vote(s), 1 renew(s)"; s.Verdict != want {
		t.Errorf("verdict %q, want %q", s.Verdict, want)
	}
}

// A renewal left unanswered is settled by a later one the server granted
// for the same token (a lapsed lock cannot be renewed again): the run is
// then known. Without that later answer it stays unknown.
func TestALaterRenewalSettlesAnUnansweredOne(t *testing.T) {
	h := event.Header{Scenario: "oversell", Strategy: "watchdog", Params: event.Params{Workers: 1, Stock: 1}}
	ev := func(k event.Kind, f func(*event.Event)) event.Event {
		e := event.Event{Worker: 0, Kind: k, Res: "lock:stock", Token: "t1"}
		if f != nil {
			f(&e)
		}
		return e
	}
	story := func(settled bool) check.Slice {
		evs := check.Slice{
			{Worker: event.System, Kind: event.KindInit, Res: "stock", Stock: 1, Has: event.HasStock},
			ev(event.KindAttempt, nil),
			ev(event.KindAcquired, nil),
			ev(event.KindRenewFailed, func(e *event.Event) { e.Outcome, e.Msg = event.OutcomeIndeterminate, "i/o timeout" }),
		}
		if settled {
			evs = append(evs, ev(event.KindRenewed, nil))
		}
		return append(evs,
			ev(event.KindRead, func(e *event.Event) { e.Res, e.Stock, e.Has = "stock", 1, event.HasStock }),
			ev(event.KindWrite, func(e *event.Event) {
				e.Res, e.Stock, e.Has, e.OK = "stock", 0, event.HasStock|event.HasOK, true
			}),
			ev(event.KindRelease, func(e *event.Event) { e.OK, e.Has = false, event.HasOK }),
			ev(event.KindDone, func(e *event.Event) { e.OK, e.Has = true, event.HasOK }),
			event.Event{Worker: event.System, Kind: event.KindRead, Res: "stock", Stock: 0, Has: event.HasStock},
		)
	}
	if s := scenario.Summarize(h, story(false)); !strings.HasPrefix(s.Verdict, "INDETERMINATE") {
		t.Errorf("unsettled: verdict %q, want INDETERMINATE", s.Verdict)
	}
	if s := scenario.Summarize(h, story(true)); strings.HasPrefix(s.Verdict, "INDETERMINATE") || s.UnansweredOps != 0 {
		t.Errorf("settled: verdict %q with %d unanswered, want it known", s.Verdict, s.UnansweredOps)
	}
}
