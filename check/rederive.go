package check

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/event"
)

// A log read from disk is untrusted: its verdict is derived again from its
// primary events (what workers and the system did), and the derived events
// it carries (violations, deadlocks) are only compared with what the
// checker derives from them.

// derived reports whether events of kind k are the checker's, not primary.
func derived(k event.Kind) bool { return k == event.KindViolation || k == event.KindDeadlock }

// derivation is one derived event, placed after the primary events before it.
type derivation struct {
	after  int // primary events before it
	kind   event.Kind
	code   string
	worker int32
	res    string
}

func (d derivation) String() string {
	what := d.code
	if d.kind == event.KindDeadlock {
		what = "deadlock"
	}
	return fmt.Sprintf("%s by %s on %s after event %d", what, WorkerName(d.worker), d.res, d.after)
}

// Rederiver runs the checker over a log's primary events and compares the
// derived events the log recorded with those the checker derives. It
// keeps counts, and pairs the two as they come: a log records a derived
// event right after the event it derives from, and the checker derives at
// most a few from one event, so the side that runs ahead by more than
// maxUnpaired is already wrong at its first unpaired one — what it holds
// stays bounded, whatever the log.
type Rederiver struct {
	Checker  *Checker
	primary  int
	rec, der [len(derivedCodes)]int // counts by code
	unpaired []derivation           // the side ahead's, not yet paired
	recAhead bool                   // unpaired are recorded ones
	first    [2]derivation          // the first pair that differs: recorded, derived
	differ   bool                   // … found
}

// derivedCodes are the derived events' codes the counts compare.
var derivedCodes = [...]string{CodeOverlap, CodeLostUpdate, CodeOversold, CodeDuplicate, "deadlock"}

// maxUnpaired is more than one event's derived events.
const maxUnpaired = 16

// NewRederiver returns a rederiver with a fresh checker.
func NewRederiver() *Rederiver { return &Rederiver{Checker: NewChecker()} }

// Add takes the log's next event. A primary event is passed to keep,
// followed by whatever the checker derives from it; a recorded derived
// event is only noted.
func (r *Rederiver) Add(e event.Event, keep func(event.Event)) {
	if derived(e.Kind) {
		r.note(true, derivation{r.primary, e.Kind, e.Code, e.Worker, e.Res})
		return
	}
	if keep != nil {
		keep(e)
	}
	r.primary++
	for _, d := range r.Checker.Fold(e) {
		r.note(false, derivation{r.primary, d.Kind, d.Code, d.Worker, d.Res})
		if keep != nil {
			d.T = e.T
			keep(d)
		}
	}
}

// note counts d, recorded or derived, and pairs it with the other side's.
func (r *Rederiver) note(recorded bool, d derivation) {
	counts := &r.der
	if recorded {
		counts = &r.rec
	}
	code := d.code
	if d.kind == event.KindDeadlock {
		code = "deadlock"
	}
	for i, c := range derivedCodes {
		if c == code {
			counts[i]++
		}
	}
	switch {
	case r.differ:
	case len(r.unpaired) == 0 || r.recAhead == recorded:
		if len(r.unpaired) <= maxUnpaired {
			r.unpaired, r.recAhead = append(r.unpaired, d), recorded
		}
		if len(r.unpaired) > maxUnpaired { // the first unpaired can no longer pair
			r.unpaired = r.unpaired[:1]
		}
	default:
		o := r.unpaired[0]
		r.unpaired = r.unpaired[1:]
		if o != d {
			r.first, r.differ = [2]derivation{o, d}, true
			if recorded {
				r.first = [2]derivation{d, o}
			}
			r.unpaired = nil
		}
	}
}

// Held is how many derived events the rederiver holds unpaired.
func (r *Rederiver) Held() int { return len(r.unpaired) }

// Mismatch says how the recorded derived events differ from the derived
// ones, in words, or "" when they agree.
func (r *Rederiver) Mismatch() string {
	var diffs []string
	for i, code := range derivedCodes {
		if r.rec[i] != r.der[i] {
			diffs = append(diffs, fmt.Sprintf("it records %d %s event(s), its events show %d", r.rec[i], code, r.der[i]))
		}
	}
	if len(diffs) > 0 {
		return "this log's verdict differs from what its events show: " + strings.Join(diffs, "; ") + ". The verdict here is the one its events show."
	}
	const differs = "this log's verdict differs from what its events show: it records %s where its events show %s. The verdict here is the one its events show."
	switch {
	case r.differ:
		return fmt.Sprintf(differs, "a "+r.first[0].String(), "a "+r.first[1].String())
	case len(r.unpaired) > 0 && r.recAhead:
		return fmt.Sprintf(differs, "a "+r.unpaired[0].String(), "none")
	case len(r.unpaired) > 0:
		return fmt.Sprintf(differs, "none", "a "+r.unpaired[0].String())
	}
	return ""
}

// serverVerdict gives the verdict of a run that a server failed (it said
// no) or left in doubt (it did not answer); false if neither happened.
func (s *Summary) serverVerdict() bool {
	var found string
	if s.Overlaps > 0 || s.LostUpdates > 0 || s.Duplicates > 0 || s.Oversold {
		found = fmt.Sprintf(" Before that the checker found %s.", s.violationWords())
	}
	switch {
	case s.FailedOps > 0:
		s.Verdict = "SERVER FAILED — " + s.ServerError
		s.Detail = fmt.Sprintf("The server refused %d operation(s): this run says nothing about locking.%s", s.FailedOps, found)
		if s.UnansweredOps > 0 {
			s.Detail += fmt.Sprintf(" %d more went unanswered.", s.UnansweredOps)
		}
	case s.UnansweredOps > 0:
		var parts []string
		if s.UnansweredWrites > 0 {
			w := fmt.Sprintf("%d write(s) timed out or lost their connection", s.UnansweredWrites)
			switch {
			case s.LandedWrites > 0:
				w += "; the stock shows one of them landed after its worker gave up"
			case s.HasStock:
				w += "; the stock cannot tell whether they landed"
			default:
				w += "; they may or may not have happened"
			}
			parts = append(parts, w)
		}
		if n := s.UnansweredOps - s.UnansweredWrites; n > 0 {
			parts = append(parts, fmt.Sprintf("%d other operation(s) got no answer (%s): %s", n, s.UnansweredKinds, s.UnansweredError))
		}
		s.Verdict = fmt.Sprintf("INDETERMINATE — %d operation(s) unanswered: %s", s.UnansweredOps, s.UnansweredKinds)
		s.Detail = "INDETERMINATE: " + strings.Join(parts, "; ") + ". Whether locking held cannot be told from this run." + found
	default:
		return false
	}
	s.faultWords()
	return true
}

// gaveUpWords says, after the verdict's detail, the calls the lock's own
// library stopped waiting for on its own deadline: their effect is not
// known, and it is not a server's failure, so the verdict stands.
func (s *Summary) gaveUpWords() {
	if s.GaveUpOps == 0 {
		return
	}
	msg := s.GaveUpMsg
	if msg == "" {
		msg = "the library gave up on its own deadline; whether it happened is not known"
	}
	s.Detail += fmt.Sprintf(" %d call(s) the lock's library gave up on at its own deadline (%s); the first: %s.", s.GaveUpOps, s.GaveUpKinds, msg)
}

// faultWords puts first in the detail the fault that took a node away, when
// one did: the server failed the run because the run's own fault stopped it.
func (s *Summary) faultWords() {
	if len(s.netFaults) > 0 {
		s.Detail = fmt.Sprintf("Network faults were put on the workers' links (%s): the operations they broke are theirs. %s",
			strings.Join(s.netFaults, "; "), s.Detail)
	}
	if len(s.nodesDown) > 0 {
		s.Detail = fmt.Sprintf("A fault took the run's data away (%s), so the workers could not reach Redis. %s",
			strings.Join(s.nodesDown, "; "), s.Detail)
	}
}

// violationWords names what the checker found.
func (s *Summary) violationWords() string {
	var p []string
	if s.Overlaps > 0 {
		p = append(p, s.overlapWords())
	}
	if s.LostUpdates > 0 {
		p = append(p, fmt.Sprintf("%s lost update(s)", s.lostWords()))
	}
	if s.Duplicates > 0 {
		p = append(p, fmt.Sprintf("%d duplicate(s)", s.Duplicates))
	}
	if s.Oversold {
		p = append(p, "an oversell")
	}
	return strings.Join(p, ", ")
}

// overlapWords names both overlap counts.
func (s *Summary) overlapWords() string {
	return fmt.Sprintf("%s %s into an occupied section, %s overlapping %s", thousands(s.Overlaps), plural(s.Overlaps, "entry", "entries"),
		thousands(s.OverlapPairs), plural(s.OverlapPairs, "pair", "pairs"))
}

// lostWords is the lost-update count, or its bound.
func (s *Summary) lostWords() string {
	if s.LostUnknown {
		return "unknown"
	}
	if s.LostUpdatesMax > s.LostUpdates {
		return fmt.Sprintf("%d to %d", s.LostUpdates, s.LostUpdatesMax)
	}
	return fmt.Sprint(s.LostUpdates)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// thousands writes n with thousands separators: 1,225.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Doubt is why the run's verdict cannot be the lock's — the server refused
// operations, or left some unanswered, on any kind of event — or nil.
// Such a run ends SERVER FAILED or INDETERMINATE, and exits 1.
func (s *Summary) Doubt() error {
	switch {
	case s.FailedOps > 0:
		return fmt.Errorf("the server refused %d operation(s) (%s): the verdict is not the lock's", s.FailedOps, s.ServerError)
	case s.UnansweredOps > 0:
		return fmt.Errorf("the server left %d operation(s) unanswered (%s: %s): whether they happened is unknown", s.UnansweredOps, s.UnansweredKinds, s.UnansweredError)
	case strings.HasPrefix(s.Verdict, "UNKNOWN"):
		return fmt.Errorf("the log held more than the checker keeps (%s): it cannot be called correct", strings.Join(s.Untracked, "; "))
	}
	return nil
}
