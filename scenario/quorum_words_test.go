package scenario_test

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// quorumLog is a Redlock round on 5 nodes with a stock of 3: w00 buys one;
// w01 is denied with node 0 saying taken, nodes 1–3 answering with trouble
// (outcome), node 4 granting, and gives up.
func quorumLog(trouble event.Outcome) check.Slice {
	ev := func(w int32, k event.Kind, f func(*event.Event)) event.Event {
		e := event.Event{Worker: w, Kind: k, Res: "lock:stock"}
		if f != nil {
			f(&e)
		}
		return e
	}
	vote := func(w int32, node int16, ok bool, out event.Outcome) event.Event {
		return ev(w, event.KindVote, func(e *event.Event) {
			e.Node, e.Has, e.OK, e.Outcome = node, event.HasNode|event.HasOK, ok, out
			if out != event.OutcomeOK {
				e.Msg = "i/o timeout"
			}
		})
	}
	evs := check.Slice{{Worker: event.System, Kind: event.KindInit, Res: "stock", Stock: 3, Has: event.HasStock},
		ev(0, event.KindAttempt, nil)}
	for n := range int16(5) {
		evs = append(evs, vote(0, n, true, event.OutcomeOK))
	}
	evs = append(evs, ev(0, event.KindAcquired, nil),
		ev(0, event.KindRead, func(e *event.Event) { e.Res, e.Stock, e.Has = "stock", 3, event.HasStock }),
		ev(0, event.KindWrite, func(e *event.Event) {
			e.Res, e.Stock, e.Has, e.OK = "stock", 2, event.HasStock|event.HasOK, true
		}),
		ev(0, event.KindRelease, func(e *event.Event) { e.OK, e.Has = true, event.HasOK }),
		ev(0, event.KindDone, func(e *event.Event) { e.OK, e.Has = true, event.HasOK }),
		ev(1, event.KindAttempt, nil), vote(1, 0, false, event.OutcomeOK))
	for n := int16(1); n <= 3; n++ {
		evs = append(evs, vote(1, n, false, trouble))
	}
	evs = append(evs, vote(1, 4, true, event.OutcomeOK),
		ev(1, event.KindDenied, func(e *event.Event) { e.Msg = "lock: not obtained: 1 of 5 nodes granted (quorum 3)" }),
		ev(1, event.KindDone, func(e *event.Event) { e.Code, e.Msg = check.FailLock, "lock: not obtained" }),
		event.Event{Worker: event.System, Kind: event.KindRead, Res: "stock", Stock: 2, Has: event.HasStock})
	return evs
}

// Votes that went unanswered are never told as a busy lock: the run is
// INDETERMINATE naming them; votes refused with an error make the denial
// one short of a quorum through the nodes, not through the holder; only
// nodes that all said "taken" are a busy lock.
func TestUnansweredVotesAreNotABusyLock(t *testing.T) {
	h := event.Header{Scenario: "oversell", Strategy: "redlock", Params: event.Params{Workers: 2, Stock: 3, Nodes: 5}}
	s := scenario.Summarize(h, quorumLog(event.OutcomeIndeterminate))
	if !strings.HasPrefix(s.Verdict, "INDETERMINATE") || !strings.Contains(s.Verdict, "3 vote(s)") {
		t.Errorf("unanswered votes: verdict %q, want INDETERMINATE naming 3 votes", s.Verdict)
	}
	if strings.Contains(s.Verdict+s.Detail, "busy") || s.DeniedNoQuorum != 1 {
		t.Errorf("unanswered votes: %q / %q, %d denial(s) short of a quorum (want 1)", s.Verdict, s.Detail, s.DeniedNoQuorum)
	}
	s = scenario.Summarize(h, quorumLog(event.OutcomeFailed))
	if !strings.HasPrefix(s.Verdict, "CORRECT, UNDERSOLD") || strings.Contains(s.Detail, "busy") ||
		!strings.Contains(s.Detail, "refused or did not answer, not because the lock was held") {
		t.Errorf("refused votes: %q — %q", s.Verdict, s.Detail)
	}
	taken := quorumLog(event.OutcomeOK) // nodes 1–3 say taken too
	if s = scenario.Summarize(h, taken); s.DeniedNoQuorum != 0 || !strings.Contains(s.Detail, "gave up on a busy lock") {
		t.Errorf("taken votes: %d short of a quorum, %q; want a busy lock", s.DeniedNoQuorum, s.Detail)
	}
}
