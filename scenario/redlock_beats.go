package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
)

// redlockBeats narrate each part played from what its events show: the
// votes each worker got, node by node, who was inside when, and what the
// record did with each write. Every beat has an event that always comes
// (its worker's done), so a part whose fault the store cannot inject is
// told as it happened — one holder at a time — and the parts after it are
// still told.
func redlockBeats(strategy string, p event.Params) []Beat {
	st := &redlockStory{ttl: p.TTL.D(), held: map[int32]ballot{}, cur: map[int32]*ballot{}, who: "Redlock", drift: lock.Drift(p.TTL.D())}
	if strategy == "redsync-quorum" {
		st.who, st.drift = "redsync", lock.RedsyncDrift(p.TTL.D())
	}
	var bs []Beat
	for k, part := range redlockParts(strategy, p) {
		a, b := int32(2*k), int32(2*k+1)
		res := redlockRes[part]
		switch part {
		case 0:
			bs = append(bs,
				Beat{"quorum", st.on(answerOf(a, "lock:Q")), st.quorum},
				Beat{"quorum-lost", st.on(answerOf(b, "lock:Q")), st.quorum})
		case 1, 2, 5:
			bs = append(bs, Beat{event.RedlockParts[part].Name, st.on(func(e event.Event) bool {
				return overlapOn(res)(e) || by(event.KindDone, b)(e)
			}), st.bareMajority(part, a, b)})
		case 3:
			bs = append(bs,
				Beat{"pause", st.on(func(e event.Event) bool { return overlapOn(res)(e) || by(event.KindDone, b)(e) }), st.pause(a, b)},
				// The checker's lost update comes right after the write it
				// finds stale; a write that was not stale is told at a's done.
				Beat{"stale-write", st.on(func(e event.Event) bool {
					return (e.Kind == event.KindViolation && e.Code == check.CodeLostUpdate && e.Res == res) || by(event.KindDone, a)(e)
				}), st.staleWrite(a, b)})
		case 4:
			bs = append(bs,
				Beat{"fence-issued", st.on(func(e event.Event) bool {
					return (e.Kind == event.KindWrite && e.Worker == b && e.Res == res) || by(event.KindDone, b)(e)
				}), st.fenceIssued(a, b)},
				Beat{"fenced", st.on(func(e event.Event) bool {
					return (e.Kind == event.KindWrite && e.Worker == a && e.Res == res) || by(event.KindDone, a)(e)
				}), st.fenced(a, b)})
		}
	}
	return bs
}

// answerOf is w's first answer about lock key: acquired or denied, or
// its done if it never got one.
func answerOf(w int32, key string) func(event.Event) bool {
	return func(e event.Event) bool {
		return e.Worker == w && ((e.Res == key && (e.Kind == event.KindAcquired || e.Kind == event.KindDenied)) || e.Kind == event.KindDone)
	}
}

func overlapOn(res string) func(event.Event) bool {
	return func(e event.Event) bool {
		return e.Kind == event.KindViolation && e.Code == check.CodeOverlap && e.Res == res
	}
}

// ballot is one Redlock attempt's answers, node by node.
type ballot struct {
	key     string
	granted []int
	refused []string // "node 3 down"
	fences  map[int]int64
	nodes   int
	fence   int64 // the lock's, once acquired
	at      time.Duration
	grantAt map[int]time.Duration // when each node's grant came
}

// redlockStory is what a Redlock run's events have shown so far.
type redlockStory struct {
	ttl   time.Duration
	who   string            // whose drift allowance: "Redlock" (locklab's), "redsync"
	drift time.Duration     // its allowance on the TTL
	moved string            // how node 2's clock was moved, as the log says: "jump", "slew" or "" (a real server's cannot be)
	cur   map[int32]*ballot // each worker's attempt in progress
	held  map[int32]ballot  // each worker's granted attempt
	rec   map[string]int64  // the record's last fence accepted, per resource
	wrote map[int32]bool    // each worker's last write: landed or not
}

// on folds every event the narration sees into the story, then asks when.
func (s *redlockStory) on(when func(event.Event) bool) func(event.Event) bool {
	return func(e event.Event) bool {
		s.fold(e)
		return when(e)
	}
}

func (s *redlockStory) fold(e event.Event) {
	switch e.Kind {
	case event.KindBeat:
		if e.Has&event.HasNode != 0 && e.Node == 2 {
			switch {
			case strings.Contains(e.Msg, "clock slews"):
				s.moved = "slew"
			case strings.Contains(e.Msg, "clock jumped"):
				s.moved = "jump"
			}
		}
	case event.KindAttempt:
		s.cur[e.Worker] = &ballot{key: e.Res, fences: map[int]int64{}, grantAt: map[int]time.Duration{}}
	case event.KindVote:
		b := s.cur[e.Worker]
		if b == nil || b.key != e.Res {
			return
		}
		b.nodes++
		if e.OK {
			b.granted = append(b.granted, int(e.Node))
			b.grantAt[int(e.Node)] = e.T
			if e.Has&event.HasFence != 0 {
				b.fences[int(e.Node)] = e.Fence
			}
		} else {
			b.refused = append(b.refused, fmt.Sprintf("node %d %s", e.Node, voteWords(e)))
		}
	case event.KindAcquired:
		if b := s.cur[e.Worker]; b != nil && b.key == e.Res {
			b.fence, b.at = e.Fence, e.T
			slices.Sort(b.granted)
			s.held[e.Worker] = *b
		}
	case event.KindFenceOK:
		if s.rec == nil {
			s.rec = map[string]int64{}
		}
		s.rec[e.Res] = e.Fence
	case event.KindWrite:
		if s.wrote == nil {
			s.wrote = map[int32]bool{}
		}
		s.wrote[e.Worker] = e.Has&event.HasOK == 0 || e.OK
	}
}

// quorum tells a part-1 attempt: who granted, who did not, and whether
// that was a quorum.
func (s *redlockStory) quorum(e event.Event) string {
	b := s.cur[e.Worker]
	if b == nil || b.nodes == 0 {
		return fmt.Sprintf("%s got no answer from the nodes: %s", wn(e), e.Msg)
	}
	quorum := b.nodes/2 + 1
	slices.Sort(b.refused) // in node order, however the answers arrived
	not := ""
	switch len(b.refused) {
	case 0:
		not = ". No node was down: every node answered"
	case 1:
		not = ", with one node not granting (" + b.refused[0] + ")"
	default:
		not = fmt.Sprintf(", with %d nodes not granting (%s)", len(b.refused), strings.Join(b.refused, ", "))
	}
	if e.Kind == event.KindAcquired {
		return fmt.Sprintf("%d of %d nodes granted %s — a quorum of %d: %s holds it%s.", len(b.granted), b.nodes, e.Res, quorum, wn(e), not)
	}
	return fmt.Sprintf("Only %d of %d nodes granted %s — short of the quorum of %d: %s is denied%s.", len(b.granted), b.nodes, strings.TrimPrefix(b.key, ""), quorum, wn(e), not)
}

// bareMajority tells whether node 2's lost copy let a second holder in.
func (s *redlockStory) bareMajority(part int, a, b int32) func(event.Event) string {
	return func(e event.Event) string {
		ha, okA := s.held[a]
		hb, okB := s.held[b]
		switch {
		case e.Kind == event.KindViolation && okA && okB:
			var how string
			switch {
			case part == 2:
				how = fmt.Sprintf("its replica had not received %s's key when it took over", check.WorkerName(a))
			case part == 5:
				how = fmt.Sprintf("it restarted without persistence and forgot %s's key (delaying its restart by a TTL, or fsync'd AOF, keeps it)", check.WorkerName(a))
			case s.moved == "slew":
				// When node 2 granted each of them, by the run's clock.
				gap := hb.grantAt[2] - ha.grantAt[2]
				how = fmt.Sprintf("its clock ran twice as fast: %s after it granted %s, %s's %s TTL had run out by node 2's clock, not by the run's. "+
					"A slew that fast is no safer than a jump — %s allows for %s of drift on a %s TTL",
					ms(gap), check.WorkerName(a), check.WorkerName(a), ms(s.ttl), s.who, ms(s.drift), ms(s.ttl))
			case s.moved == "jump":
				how = fmt.Sprintf("its clock jumped %s, so %s's key lapsed there at once", ms(s.ttl), check.WorkerName(a))
			default:
				how = fmt.Sprintf("nothing moved its clock: %s's %s TTL ran out while it still worked, later than planned (a busy machine)", check.WorkerName(a), ms(s.ttl))
			}
			return fmt.Sprintf("%s got %s while %s still holds %s: node 2 granted both — %s. Two holders of one Redlock. %s",
				check.WorkerName(b), nodeList(hb.granted), check.WorkerName(a), nodeList(ha.granted), how, e.Msg)
		case okA && okB:
			return fmt.Sprintf("%s got %s only after %s released: node 2 kept %s's key until then — one holder at a time.",
				check.WorkerName(b), nodeList(hb.granted), check.WorkerName(a), check.WorkerName(a))
		case okA:
			return fmt.Sprintf("%s never got a majority: node 2 kept %s's key — one holder at a time.", check.WorkerName(b), check.WorkerName(a))
		}
		return fmt.Sprintf("%s got no lock on nodes 0–2, so there was nothing for node 2 to lose.", check.WorkerName(a))
	}
}

// pause tells the new holder walking in beside the stale one.
func (s *redlockStory) pause(a, b int32) func(event.Event) string {
	return func(e event.Event) string {
		hb, okB := s.held[b]
		if e.Kind == event.KindViolation && okB {
			return fmt.Sprintf("%s's validity ended while it was paused: it is now a stale holder, still inside. %s got %s and walks in beside it. %s",
				check.WorkerName(a), check.WorkerName(b), nodeList(hb.granted), e.Msg)
		}
		if okB {
			return fmt.Sprintf("%s got %s only after %s had left: this time the pause did not outlast the lock.", check.WorkerName(b), nodeList(hb.granted), check.WorkerName(a))
		}
		return fmt.Sprintf("%s never got the lock.", check.WorkerName(b))
	}
}

// staleWrite tells what the stale holder's write did.
func (s *redlockStory) staleWrite(a, b int32) func(event.Event) string {
	return func(e event.Event) string {
		if e.Kind == event.KindViolation {
			return fmt.Sprintf("%s wakes, a stale holder, and writes the record it read before its pause: it lands over %s's write. %s",
				check.WorkerName(a), check.WorkerName(b), e.Msg)
		}
		if landed, ok := s.wrote[a]; ok && landed {
			return fmt.Sprintf("%s wakes and writes the record; no write of %s's came between its read and its write.", check.WorkerName(a), check.WorkerName(b))
		}
		return fmt.Sprintf("%s did not write the record.", check.WorkerName(a))
	}
}

// fenceIssued tells the new holder's fence and what the record made of it.
func (s *redlockStory) fenceIssued(a, b int32) func(event.Event) string {
	return func(e event.Event) string {
		ha, hb := s.held[a], s.held[b]
		if e.Kind != event.KindWrite {
			return fmt.Sprintf("%s did not write the record.", check.WorkerName(b))
		}
		verb := "accepted"
		if !e.OK {
			verb = "rejected"
		}
		return fmt.Sprintf("%s is a stale holder now, with fence %d. %s got %s, each node counting a fence (%s): its lock's fence is the highest, %d. It writes the record with fence %d — %s.",
			check.WorkerName(a), ha.fence, check.WorkerName(b), nodeList(hb.granted), fenceList(hb), hb.fence, hb.fence, verb)
	}
}

// fenced tells what the record did with the stale holder's write.
func (s *redlockStory) fenced(a, b int32) func(event.Event) string {
	return func(e event.Event) string {
		ha := s.held[a]
		switch {
		case e.Kind == event.KindWrite && !e.OK:
			return fmt.Sprintf("%s wakes, a stale holder, and writes with fence %d: the record has seen fence %d and rejects it. Two workers were inside at once, but only the current holder's write landed — fences from a majority, checked by the resource (Kleppmann's fix).",
				check.WorkerName(a), ha.fence, s.rec[e.Res])
		case e.Kind == event.KindWrite:
			return fmt.Sprintf("%s wakes and writes with fence %d: the record had seen no newer fence, and accepts it.", check.WorkerName(a), ha.fence)
		}
		return fmt.Sprintf("%s did not write the record.", check.WorkerName(a))
	}
}

// nodeList is "nodes 0–2 and 4": the nodes in order, runs of three or
// more as ranges.
func nodeList(ns []int) string {
	if len(ns) == 0 {
		return "no node"
	}
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d–%d", ns[i], ns[j]))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, fmt.Sprint(ns[k]))
			}
		}
		i = j + 1
	}
	word := "nodes "
	if len(ns) == 1 {
		word = "node "
	}
	if len(parts) == 1 {
		return word + parts[0]
	}
	return word + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// fenceList is the fences a ballot's granting nodes counted, in node
// order: "2, 2, 2, 2, 2".
func fenceList(b ballot) string {
	fs := make([]string, len(b.granted))
	for i, n := range b.granted {
		fs[i] = fmt.Sprint(b.fences[n])
	}
	return strings.Join(fs, ", ")
}

// voteWords says why a node did not grant, in a few words.
func voteWords(e event.Event) string {
	switch {
	case e.Msg == "taken":
		return "held by another owner"
	case strings.Contains(e.Msg, "connection refused"):
		return "down"
	case e.Outcome == event.OutcomeIndeterminate:
		return "did not answer in time"
	case e.Outcome == event.OutcomeGaveUp:
		return "not heard in time: its library gave up on it"
	case e.Outcome == event.OutcomeFailed:
		return "refused: " + e.Msg
	}
	return "did not grant"
}
