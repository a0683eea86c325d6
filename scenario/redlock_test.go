package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// beat is the caption of the beat id, "" if it was not said.
func (o outcome) beat(id string) string {
	for _, e := range o.evs {
		if e.Kind == event.KindBeat && e.Code == id {
			return e.Msg
		}
	}
	return ""
}

// realServer reports whether the run's node faults were refused: a store
// that cannot move a node's clock.
func (o outcome) realServer() bool {
	return o.count(event.KindBeat, func(e event.Event) bool { return strings.HasPrefix(e.Msg, "not available on a real server") }) > 0
}

// first is the first event of kind k that f accepts.
func (o outcome) first(k event.Kind, f func(event.Event) bool) (event.Event, bool) {
	for _, e := range o.evs {
		if e.Kind == k && (f == nil || f(e)) {
			return e, true
		}
	}
	return event.Event{}, false
}

// The pause past the validity, alone (--part pause): the new holder walks
// in beside the stale one, and the stale one's write lands over its write.
func TestRedlockPausePart(t *testing.T) {
	t.Parallel()
	eachAt(t, redlockSpeed, "redlock", "redlock", 8, func(p *event.Params) { p.Part = "pause" }, func(t *testing.T, o outcome) {
		if o.s.Workers != 2 {
			t.Errorf("one part is played by 2 workers, not %d", o.s.Workers)
		}
		if n := o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "P" && e.Code == check.CodeOverlap }); n != 1 {
			t.Errorf("%d overlaps on P; want the new holder beside the stale one", n)
		}
		if n := o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "P" && e.Code == check.CodeLostUpdate && e.Worker == 0 }); n != 1 {
			t.Errorf("%d lost updates by w00; want its stale write to land over w01's", n)
		}
		for _, id := range []string{"pause", "stale-write"} {
			if !strings.Contains(o.beat(id), "stale holder") {
				t.Errorf("beat %s does not name w00 a stale holder: %q", id, o.beat(id))
			}
		}
		if o.count(event.KindInit, func(e event.Event) bool { return e.Res != "P" }) != 0 {
			t.Error("a part played alone set up another part's resource")
		}
	})
}

// Kleppmann's fix (--part fence): fences issued by the majority that
// grants each lock; the record rejects the stale holder's older fence.
func TestRedlockFencePart(t *testing.T) {
	t.Parallel()
	eachAt(t, redlockSpeed, "redlock", "redlock", 8, func(p *event.Params) { p.Part = "fence" }, func(t *testing.T, o outcome) {
		if n := o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "S" && e.Code == check.CodeOverlap }); n != 1 {
			t.Errorf("%d overlaps on S; the lock still lets the new holder in beside the stale one", n)
		}
		// Each acquired fence is the highest its granting nodes counted.
		votes := map[int32]map[int32]int64{} // worker → attempt → highest granted fence
		fences := map[int32]int64{}
		for _, e := range o.evs {
			switch {
			case e.Kind == event.KindVote && e.OK:
				if e.Has&event.HasFence == 0 || e.Fence < 1 {
					t.Fatalf("%s's granted vote from node %d carries no fence", check.WorkerName(e.Worker), e.Node)
				}
				if votes[e.Worker] == nil {
					votes[e.Worker] = map[int32]int64{}
				}
				votes[e.Worker][e.Attempt] = max(votes[e.Worker][e.Attempt], e.Fence)
			case e.Kind == event.KindAcquired:
				if e.Fence != votes[e.Worker][e.Attempt] {
					t.Fatalf("%s acquired with fence %d; its nodes' highest was %d", check.WorkerName(e.Worker), e.Fence, votes[e.Worker][e.Attempt])
				}
				fences[e.Worker] = e.Fence
			}
		}
		if fences[1] <= fences[0] {
			t.Errorf("the new holder's fence %d is not above the stale holder's %d", fences[1], fences[0])
		}
		ok, found := o.first(event.KindFenceOK, nil)
		if !found || ok.Worker != 1 || ok.Fence != fences[1] {
			t.Errorf("the record should accept w01's fence %d first: %+v", fences[1], ok)
		}
		rej, found := o.first(event.KindFenceRejected, nil)
		if !found || rej.Worker != 0 || rej.Fence != fences[0] || rej.Seq < ok.Seq {
			t.Errorf("the record should reject w00's fence %d after w01's write: %+v", fences[0], rej)
		}
		if n := o.count(event.KindWrite, func(e event.Event) bool { return e.OK }); n != 1 || o.s.LostUpdates != 0 {
			t.Errorf("%d writes landed, %d lost updates; want the current holder's only", n, o.s.LostUpdates)
		}
		if !strings.HasPrefix(o.s.Verdict, "SAVED BY FENCING") {
			t.Errorf("verdict %q", o.s.Verdict)
		}
		if c := o.beat("fenced"); !strings.Contains(c, "stale holder") || !strings.Contains(c, "rejects it") {
			t.Errorf("the fence's caption: %q", c)
		}
	})
}

// antirez's counterpoint (--part clock --clock slew): node 2's clock gains
// the jump's amount, a TTL, gradually over a TTL. Whatever happens is read
// from the events: on the embedded store node 2 runs twice as fast, its
// copy of the key lapses later than a jump's would — yet while the holder
// still works, so two holders anyway. A real server's clock cannot be
// moved: one holder at a time. At ½× the holder's last 300ms of work,
// when the new holder may walk in, last 600ms of real time.
func TestRedlockSlew(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("redlock")
	ttl := sc.Defaults.TTL.D()
	eachAt(t, slowSpeed, "redlock", "redlock", 8, func(p *event.Params) { p.Part, p.Clock = "clock", "slew" }, func(t *testing.T, o outcome) {
		overlaps := o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "J" && e.Code == check.CodeOverlap })
		caption := o.beat("clock")
		if o.realServer() {
			// Nothing moves a real server's clock: one holder at a time, or,
			// if a busy machine kept the holder past its TTL, a caption
			// that says so and claims no slew.
			if strings.Contains(caption, "twice as fast") || strings.Contains(caption, "jumped") ||
				(overlaps == 0) != strings.Contains(caption, "one holder at a time") ||
				(overlaps != 0 && !strings.Contains(caption, "nothing moved its clock")) {
				t.Errorf("a real server's clock cannot slew: %d overlaps, caption %q", overlaps, caption)
			}
			return
		}
		if o.count(event.KindBeat, func(e event.Event) bool { return strings.Contains(e.Msg, "clock slews") && e.Node == 2 }) != 1 {
			t.Fatal("no slew of node 2's clock in the log")
		}
		if overlaps != 1 || !strings.Contains(caption, "twice as fast") || !strings.Contains(caption, "Two holders") {
			t.Fatalf("%d overlaps on J, caption %q; a slew of a TTL over a TTL lets the key lapse inside the validity", overlaps, caption)
		}
		// Node 2 granted w01 no sooner than its clock allowed: at twice the
		// speed, at least half a TTL after it granted w00.
		grant := func(w int32) event.Event {
			e, _ := o.first(event.KindVote, func(e event.Event) bool { return e.Worker == w && e.Node == 2 && e.OK })
			return e
		}
		first, second := grant(0), grant(1)
		if gap := second.T - first.Start(); gap < ttl/2 {
			t.Errorf("node 2 granted w01 %v after w00: sooner than a clock at twice the speed lets a %v key lapse", gap, ttl)
		}
	})
}

// The parts are chosen by name; an unknown part or clock is refused with
// the real list.
func TestRedlockPartsParams(t *testing.T) {
	p := event.Params{Workers: 2, TTL: event.Millis(time.Second), RetryBase: event.Millis(time.Millisecond),
		RetryCap: event.Millis(time.Second), Nodes: 5, Retry: "fixed"}
	for _, part := range []string{"", "all", "quorum", "clock", "failover", "pause", "fence"} {
		p.Part = part
		if err := p.Validate(); err != nil {
			t.Errorf("--part %q: %v", part, err)
		}
	}
	p.Part = "nope"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "all, quorum, clock, failover, pause, fence") {
		t.Errorf("--part nope: %v", err)
	}
	p.Part, p.Clock = "", "drift"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "jump, slew") {
		t.Errorf("--clock drift: %v", err)
	}
}
