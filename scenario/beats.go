package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/store"
)

// Beat is one line of a scenario's narration: a caption said when the event
// it waits for happens. Beats become beat events in the log, right after the
// event that triggered them, so they replay and mark the timeline like
// everything else. A scenario's beats are said in order, each at most once:
// a beat whose event never comes is never said, and neither are the ones
// after it — the narration can lag behind the run, never run ahead of it.
type Beat struct {
	ID  string
	On  func(e event.Event) bool
	Say func(e event.Event) string
}

// BeatVerdict is the ID of the beat every run ends with: the checker's
// verdict, whatever happened.
const BeatVerdict = "verdict"

// narrator is the deriver that says a run's beats.
type narrator struct {
	beats []Beat
	next  int
	out   []event.Event
}

// Fold says the next beat if e is its event. The narration's own beats
// are not events of the story; a node's fault (told as a beat with its
// node) is: a caption may need to know what was done to a node.
func (n *narrator) Fold(e event.Event) []event.Event { return n.fold(&e) }

func (n *narrator) fold(e *event.Event) []event.Event {
	n.out = n.out[:0]
	if (e.Kind == event.KindBeat && e.Has&event.HasNode == 0) || n.next >= len(n.beats) {
		return n.out
	}
	if b := n.beats[n.next]; b.On(*e) {
		n.next++
		n.out = append(n.out, event.Event{Kind: event.KindBeat, Worker: event.System, Code: b.ID, Msg: b.Say(*e)})
	}
	return n.out
}

// chain runs the checker, then the narrator over the event and over what
// the checker derived, so a violation can be a beat's event.
type chain struct {
	check *check.Checker
	tell  *narrator
	out   []event.Event
}

func (c *chain) Fold(e event.Event) []event.Event { return c.fold(&e) }

// fold is Fold by pointer, so that the event
// stays on the emitting worker's stack.
func (c *chain) fold(e *event.Event) []event.Event {
	if c.tell.next >= len(c.tell.beats) {
		return c.check.Fold(*e) // the story is told: only the checker is left
	}
	c.out = append(c.out[:0], c.check.Fold(*e)...)
	n := len(c.out)
	c.out = append(c.out, c.tell.fold(e)...)
	for i := range n {
		d := c.out[i] // c.out grows below: fold a copy
		c.out = append(c.out, c.tell.fold(&d)...)
	}
	return c.out
}

// Deriver is what a run of sc derives as its events are appended: the
// checker's violations, then the narration's beats.
func (sc *Scenario) Deriver(strategy string, p event.Params) event.Deriver {
	return &chain{check: check.NewChecker(), tell: &narrator{beats: beatsFor(sc, strategy, p)}}
}

// deriverOn is Deriver for a run that has the servers have.
func (sc *Scenario) deriverOn(strategy string, p event.Params, have store.Servers) event.Deriver {
	if sc.beatsOn == nil {
		return sc.Deriver(strategy, p)
	}
	return &chain{check: check.NewChecker(), tell: &narrator{beats: sc.beatsOn(strategy, p, &have)}}
}

// Beat triggers.

func is(k event.Kind) func(event.Event) bool { return func(e event.Event) bool { return e.Kind == k } }

func by(k event.Kind, w int32) func(event.Event) bool {
	return func(e event.Event) bool { return e.Kind == k && e.Worker == w }
}

func notBy(k event.Kind, w int32) func(event.Event) bool {
	return func(e event.Event) bool { return e.Kind == k && e.Worker != w }
}

func violation(codes ...string) func(event.Event) bool {
	return func(e event.Event) bool {
		if e.Kind != event.KindViolation {
			return false
		}
		for _, c := range codes {
			if e.Code == c {
				return true
			}
		}
		return false
	}
}

// said is a fixed caption.
func said(s string) func(event.Event) string { return func(event.Event) string { return s } }

// checkerSays repeats the checker's own words.
func checkerSays(prefix string) func(event.Event) string {
	return func(e event.Event) string { return prefix + e.Msg }
}

func wn(e event.Event) string { return check.WorkerName(e.Worker) }

func ms(d time.Duration) string { return strings.TrimSuffix(d.Round(time.Millisecond).String(), ".0") }

// fine is a duration to a millisecond, or to 10µs under one.
func fine(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(10 * time.Microsecond).String()
	}
	return ms(d)
}

// BeatIDs are the IDs of the beats a run of sc with strategy and p can
// say, in order, the verdict last: what a presenter counts from the first
// beat ("beat 1 of 4"). A run may say fewer (a beat whose event never comes
// is never said), never more.
func (sc *Scenario) BeatIDs(strategy string, p event.Params) []string {
	if sc.headings != nil {
		return append(sc.headings(strategy, p), BeatVerdict)
	}
	var ids []string
	for _, b := range beatsFor(sc, strategy, p) {
		ids = append(ids, b.ID)
	}
	return append(ids, BeatVerdict)
}

// Captions are what the beats of a run of sc with strategy and p can say,
// each said over an empty event: the names and numbers in them are
// placeholders, the words are the story's. A presenter's layout is checked
// against them: every panel a caption names must be on screen.
func (sc *Scenario) Captions(strategy string, p event.Params) []string {
	var out []string
	for _, b := range beatsFor(sc, strategy, p) {
		out = append(out, b.Say(event.Event{}))
	}
	return out
}

// headlines are the beats' headlines: a few words a room can read from the
// back, said in big letters over the caption.
var headlines = map[string]string{
	"race": "the race", "read": "read", "write": "write", "acquired": "locked", "denied": "denied",
	"backoff": "back off", "herd": "the herd", "crash": "crash", "recovered": "ttl ran out",
	"renewed": "renewed", "pause": "stop the world", "taken": "ttl lapsed", "resume": "resumed",
	"rejected": "rejected", "stale-write": "stale write", "deadlock": "deadlock", "broken": "two holders",
	"foreign-del": "foreign del", "refused": "refused", "reserved": "reserved", "expired": "expired",
	"again": "runs twice", "duplicate": "duplicate", "delivered": "delivered", "credited": "credited",
	"quorum": "quorum", "two-holders-J": "two holders", "two-holders-F": "two holders",
	"two-holders-P": "two holders", "part-1": "part 1", "part-2": "part 2", "part-3": "part 3", "part-4": "part 4",
}

// Headline is the headline of the beat with ID id: a few words, or the ID
// itself for a beat this build does not know. The verdict's headline is its
// caption's first words (see the summary's Verdict).
func Headline(id string) string {
	if h, ok := headlines[id]; ok {
		return h
	}
	if h, ok := tradeHeadline(id); ok {
		return h
	}
	return strings.ReplaceAll(id, "-", " ")
}

// beatsFor is the narration of sc run with strategy and p.
func beatsFor(sc *Scenario, strategy string, p event.Params) []Beat {
	if sc.beats == nil {
		return nil
	}
	return sc.beats(strategy, p)
}

func oversellBeats(strategy string, p event.Params) []Beat {
	switch strategy {
	case "none", "naive":
		// One beat, at the first violation, or at the end if the race
		// window was missed: the story is the same, and true, either way.
		return []Beat{{"race", func(e event.Event) bool {
			return violation(check.CodeOversold, check.CodeLostUpdate, check.CodeOverlap)(e) || (e.Kind == event.KindRead && e.Worker == event.System)
		}, func(e event.Event) string {
			switch {
			case e.Kind != event.KindViolation:
			case e.Code == check.CodeOverlap:
				return "Two workers are inside the critical section at once: nothing keeps them apart. " + e.Msg
			default:
				return "A write from a stale reading — the checker caught it: " + e.Msg
			}
			return "Every write landed on a fresh reading this time: the race window was missed. Run it again."
		}}}
	case "atomic":
		return []Beat{{"write", is(event.KindWrite), func(e event.Event) string {
			return fmt.Sprintf("%s's script checks and decrements in one step: stock = %d. No lock, nothing to race.", wn(e), e.Stock)
		}}}
	}
	held := heldSince{}
	return []Beat{
		{"acquired", held.see(is(event.KindAcquired)), func(e event.Event) string {
			return fmt.Sprintf("%s holds lock:stock. Everyone else is denied and backs off.", wn(e))
		}},
		{"write", held.see(is(event.KindWrite)), func(e event.Event) string {
			if held.lapsed(e, p.TTL.D()) {
				// A paused holder wakes up believing it still holds the lock.
				return fmt.Sprintf("%s writes stock = %d, but its lock's %s TTL had lapsed: it wrote without the lock.", wn(e), e.Stock, ms(p.TTL.D()))
			}
			return fmt.Sprintf("%s writes stock = %d inside the lock, then releases it.", wn(e), e.Stock)
		}},
	}
}

func staleBeats(mode staleMode) func(string, event.Params) []Beat {
	return func(strategy string, p event.Params) []Beat {
		t := lockInfo(strategy)
		fenced, watchdog := t.Fenced(), t.Renews()
		bs := []Beat{{"acquired", by(event.KindAcquired, 0), func(e event.Event) string {
			s := fmt.Sprintf("w00 holds the lock for %s; its work takes %s.", ms(p.TTL.D()), ms(p.Work.D()))
			if e.Has&event.HasFence != 0 {
				s += fmt.Sprintf(" Its fence is %d.", e.Fence)
			}
			return s
		}}}
		if watchdog && mode != stalePause {
			// (fencing's pause comes before the first renewal: a
			// renewed beat would wait for good, and the story after it
			// would go untold.)
			bs = append(bs, Beat{"renewed", by(event.KindRenewed, 0), said(renewedWords(strategy, t.Traits, p.TTL.D()) + ": w01 keeps being denied.")})
		}
		if mode != staleWork {
			bs = append(bs, Beat{"pause", by(event.KindPause, 0), said(pauseWords(strategy, t.Traits))})
		}
		if mode == staleWork && watchdog {
			return bs // the lock never lapses
		}
		bs = append(bs, Beat{"taken", notBy(event.KindAcquired, 0), func(e event.Event) string {
			return fmt.Sprintf("w00's TTL just lapsed — but w00 is still inside the critical section. %s takes the lock.", wn(e))
		}})
		if mode != staleWork {
			bs = append(bs, Beat{"resume", by(event.KindResume, 0), said("w00 resumes, still believing it holds the lock.")})
		}
		if fenced {
			return append(bs, Beat{"rejected", is(event.KindFenceRejected), func(e event.Event) string {
				return fmt.Sprintf("w00 writes with fence %d: the resource has seen a newer fence and rejects it.", e.Fence)
			}})
		}
		// The checker's lost update comes right after w00's write that it
		// finds stale: the beat is said there, not at the overlap before
		// it. A write that was not stale is told at w00's done.
		return append(bs, Beat{"stale-write", func(e event.Event) bool {
			return (e.Kind == event.KindViolation && e.Code == check.CodeLostUpdate && e.Worker == 0) || by(event.KindDone, 0)(e)
		}, func(e event.Event) string {
			if e.Kind == event.KindViolation {
				return "w00 writes what it read before its lock lapsed. The checker: " + e.Msg
			}
			return "w00 is done: the checker found none of its writes stale this time."
		}})
	}
}

func crashBeats(string, event.Params) []Beat {
	return []Beat{
		{"acquired", is(event.KindAcquired), func(e event.Event) string {
			return fmt.Sprintf("%s holds the lock.", wn(e))
		}},
		{"crash", is(event.KindCrash), func(e event.Event) string {
			return fmt.Sprintf("%s crashes holding it: nobody will ever release it. Only the TTL can.", wn(e))
		}},
		{"recovered", is(event.KindAcquired), func(e event.Event) string {
			return fmt.Sprintf("The TTL ran out: %s finally acquires. Everyone stood blocked until now.", wn(e))
		}},
	}
}

func deadlockBeats(strategy string, p event.Params) []Beat {
	if p.Order == "sorted" || p.Order == "all-at-once" {
		return []Beat{{"acquired", is(event.KindAcquired), func(e event.Event) string {
			return fmt.Sprintf("%s takes %s. Every worker locks in the same order, so no cycle can close.", wn(e), e.Res)
		}}}
	}
	bs := []Beat{{"deadlock", is(event.KindDeadlock), func(e event.Event) string {
		return "A wait-for cycle closed: " + e.Msg + ". Nobody can move."
	}}}
	if lockInfo(strategy).Renews() {
		return bs // renewed, no TTL lapses to break the cycle
	}
	return append(bs, Beat{"broken", violation(check.CodeOverlap),
		said("The TTL broke the deadlock — by letting a second holder in: two workers inside one critical section.")})
}

func naiveBeats(strategy string, p event.Params) []Beat {
	gap := lockInfo(strategy).ExpiryApart // SETNX, then EXPIRE: a crash between leaves no TTL
	crash := Beat{"crash", is(event.KindCrash), func(e event.Event) string {
		if gap {
			return fmt.Sprintf("%s crashes between SETNX and EXPIRE: its lock has no TTL.", wn(e))
		}
		return fmt.Sprintf("%s crashes right after SET NX PX: its lock still has a TTL.", wn(e))
	}}
	if gap {
		return []Beat{crash, {"foreign-del", violation(check.CodeOverlap), checkerSays("A late DEL removed the next holder's lock. The checker: ")}}
	}
	return []Beat{crash, {"refused", is(event.KindReleaseFailed), func(e event.Event) string {
		return fmt.Sprintf("%s's late release is refused: the lock is someone else's now.", wn(e))
	}}}
}

func retryBeats(strategy string, p event.Params) []Beat {
	h := &herd{base: p.RetryBase.D()}
	return []Beat{
		{"backoff", is(event.KindBackoff), func(e event.Event) string {
			return fmt.Sprintf("%s is denied and backs off %s: its policy says how long it waits before it tries again.", wn(e), ms(e.Delay))
		}},
		{"herd", h.until, h.say},
	}
}

// herd watches the workers denied on their first attempt come back: the
// beat is said when half of them have retried, with how far apart they
// came — a thundering herd when it is a fraction of the policy's delay.
type herd struct {
	base    time.Duration
	denied  map[int32]bool // denied on the first attempt, before any retry
	retries int
	first   time.Duration // the first retry
}

func (h *herd) until(e event.Event) bool {
	if h.denied == nil {
		h.denied = map[int32]bool{}
	}
	switch {
	case e.Kind == event.KindDenied && e.Attempt == 1 && h.retries == 0:
		h.denied[e.Worker] = true
	case e.Kind == event.KindAttempt && e.Attempt > 1 && h.denied[e.Worker]:
		if h.retries == 0 {
			h.first = e.T
		}
		h.retries++
		return h.retries >= max((len(h.denied)+1)/2, 1)
	}
	return false
}

func (h *herd) say(e event.Event) string {
	spread := e.T - h.first
	s := fmt.Sprintf("The herd comes back: %d of the %d workers denied at first retried within %s of each other", h.retries, len(h.denied), fine(spread))
	if h.base > 0 && spread < h.base/4 {
		return s + " — their delays are alike, so they collide again. Watch the retry-delay histogram take the policy's shape."
	}
	return s + " — jitter spreads them out, so fewer collide. Watch the retry-delay histogram take the policy's shape."
}

func queueBeats(strategy string, p event.Params) []Beat {
	bs := []Beat{{"reserved", is(event.KindAcquired), func(e event.Event) string {
		return fmt.Sprintf("%s reserves the job and starts it.", wn(e))
	}}}
	if strategy == "plain" {
		bs = append(bs,
			Beat{"expired", is(event.KindExpired), said("The reservation lapsed while the job still runs: the reaper puts it back on the queue.")},
			Beat{"again", is(event.KindAcquired), func(e event.Event) string {
				return fmt.Sprintf("%s reserves the same job and runs it too.", wn(e))
			}},
			Beat{"duplicate", violation(check.CodeDuplicate), checkerSays("The checker: ")})
	}
	return bs
}

func webhookBeats(strategy string, p event.Params) []Beat {
	return []Beat{
		{"delivered", is(event.KindRead), func(e event.Event) string {
			return fmt.Sprintf("%s handles a delivery of the same event.", wn(e))
		}},
		{"credited", is(event.KindWrite), func(e event.Event) string {
			return fmt.Sprintf("%s credits the account.", wn(e))
		}},
	}
}
