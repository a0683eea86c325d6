package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
	p := scenario.Params{Workers: 10, Stock: 10, Retry: "full-jitter", MaxRetries: 10,
		TTL: scenario.Millis(50 * time.Millisecond), Delay: scenario.Millis(100 * time.Millisecond),
		RetryBase: scenario.Millis(100 * time.Millisecond), RetryCap: scenario.Millis(5 * time.Second), Nodes: 1}
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
		if e.Outcome == scenario.OutcomeIndeterminate && e.Kind != scenario.KindError {
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
	if tl := scenario.TallyOf(scenario.Slice(evs)); tl.Unanswered(scenario.OpKind("renew")) == 0 {
		t.Errorf("the tally counts no unanswered renewal")
	}
	t.Logf("%s — %s", s.Verdict, s.Detail)
}

// A crafted log: one vote and one renewal unanswered, nothing else wrong.
func TestUnansweredVotesAndRenewalsInALog(t *testing.T) {
	h := scenario.Header{Scenario: "oversell", Strategy: "redlock", Params: scenario.Params{Workers: 1, Stock: 1, Nodes: 3}}
	ev := func(k scenario.Kind, f func(*scenario.Event)) scenario.Event {
		e := scenario.Event{Worker: 0, Kind: k, Res: "lock:stock"}
		if f != nil {
			f(&e)
		}
		return e
	}
	evs := scenario.Slice{
		{Worker: scenario.System, Kind: scenario.KindInit, Res: "stock", Stock: 1, Has: scenario.HasStock},
		ev(scenario.KindAttempt, nil),
		ev(scenario.KindVote, func(e *scenario.Event) { e.Node, e.Has, e.OK = 0, scenario.HasNode|scenario.HasOK, true }),
		ev(scenario.KindVote, func(e *scenario.Event) { e.Node, e.Has, e.OK = 1, scenario.HasNode|scenario.HasOK, true }),
		ev(scenario.KindVote, func(e *scenario.Event) {
			e.Node, e.Has, e.Outcome, e.Msg = 2, scenario.HasNode|scenario.HasOK, scenario.OutcomeIndeterminate, "i/o timeout"
		}),
		ev(scenario.KindAcquired, nil),
		ev(scenario.KindRenewFailed, func(e *scenario.Event) { e.Outcome, e.Msg = scenario.OutcomeIndeterminate, "i/o timeout" }),
		ev(scenario.KindWorkStart, func(e *scenario.Event) { e.Res = "stock" }),
		ev(scenario.KindRead, func(e *scenario.Event) { e.Res, e.Stock, e.Has = "stock", 1, scenario.HasStock }),
		ev(scenario.KindWrite, func(e *scenario.Event) {
			e.Res, e.Stock, e.Has, e.OK = "stock", 0, scenario.HasStock|scenario.HasOK, true
		}),
		ev(scenario.KindWorkEnd, func(e *scenario.Event) { e.Res = "stock" }),
		ev(scenario.KindRelease, nil),
		ev(scenario.KindDone, func(e *scenario.Event) { e.OK, e.Has = true, scenario.HasOK }),
		{Worker: scenario.System, Kind: scenario.KindRead, Res: "stock", Stock: 0, Has: scenario.HasStock},
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
	h := scenario.Header{Scenario: "oversell", Strategy: "watchdog", Params: scenario.Params{Workers: 1, Stock: 1}}
	ev := func(k scenario.Kind, f func(*scenario.Event)) scenario.Event {
		e := scenario.Event{Worker: 0, Kind: k, Res: "lock:stock", Token: "t1"}
		if f != nil {
			f(&e)
		}
		return e
	}
	story := func(settled bool) scenario.Slice {
		evs := scenario.Slice{
			{Worker: scenario.System, Kind: scenario.KindInit, Res: "stock", Stock: 1, Has: scenario.HasStock},
			ev(scenario.KindAttempt, nil),
			ev(scenario.KindAcquired, nil),
			ev(scenario.KindRenewFailed, func(e *scenario.Event) { e.Outcome, e.Msg = scenario.OutcomeIndeterminate, "i/o timeout" }),
		}
		if settled {
			evs = append(evs, ev(scenario.KindRenewed, nil))
		}
		return append(evs,
			ev(scenario.KindRead, func(e *scenario.Event) { e.Res, e.Stock, e.Has = "stock", 1, scenario.HasStock }),
			ev(scenario.KindWrite, func(e *scenario.Event) {
				e.Res, e.Stock, e.Has, e.OK = "stock", 0, scenario.HasStock|scenario.HasOK, true
			}),
			ev(scenario.KindRelease, func(e *scenario.Event) { e.OK, e.Has = false, scenario.HasOK }),
			ev(scenario.KindDone, func(e *scenario.Event) { e.OK, e.Has = true, scenario.HasOK }),
			scenario.Event{Worker: scenario.System, Kind: scenario.KindRead, Res: "stock", Stock: 0, Has: scenario.HasStock},
		)
	}
	if s := scenario.Summarize(h, story(false)); !strings.HasPrefix(s.Verdict, "INDETERMINATE") {
		t.Errorf("unsettled: verdict %q, want INDETERMINATE", s.Verdict)
	}
	if s := scenario.Summarize(h, story(true)); strings.HasPrefix(s.Verdict, "INDETERMINATE") || s.UnansweredOps != 0 {
		t.Errorf("settled: verdict %q with %d unanswered, want it known", s.Verdict, s.UnansweredOps)
	}
}
