// Package timeline folds a run's event log into the histories the views
// draw: each worker's lane states, each lock's holders, TTLs and marks, the
// stock, retry delays, wait-for edges and markers. Every entry carries the
// seq of the event that caused it, so the state at any cursor k is the
// prefix of each history up to k: stepping back and seeking cost a binary
// search, and the same fold serves live runs and replays.
package timeline

import (
	"sort"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/themes"
)

// Span is a lane state from T on.
type Span struct {
	Seq   int64
	T     time.Duration
	State themes.State
}

// Worker is one worker's history and current state. Its spans are kept
// packed, 12 bytes each: the time and state in one word, the seq in another.
type Worker struct {
	spans  []uint64 // T<<8 | state
	seqs   []uint32
	index  stateIndex
	tindex timeIndex

	holds    int
	crashed  bool
	asked    string // the lock of an attempt not answered yet
	askedTTL time.Duration
	released map[string]time.Duration // a lock the next holder took before our release came
	inCS     bool
	pending  themes.State // Attempting or Waiting, or Idle when not acquiring
	paused   bool
	finished themes.State // DoneOK / DoneFail once done, else Idle
	waitsFor int32
	waitRes  string
}

func (w *Worker) state() themes.State {
	switch {
	case w.finished != themes.Idle:
		return w.finished
	case w.crashed:
		return themes.Crashed
	case w.paused:
		return themes.Paused
	case w.inCS:
		return themes.Critical
	case w.pending != themes.Idle:
		return w.pending
	case w.holds > 0:
		return themes.Holding
	}
	return themes.Idle
}

// LockSpan is who holds a lock from T on (Holder −1: free, Unknown: held
// by someone the log does not name). TTL 0: the holding has no TTL —
// Forever when the lock's keys should have had one and this one never
// expires, else a lock without one (a session's) or a TTL not known.
type LockSpan struct {
	Seq      int64
	T        time.Duration
	TTL      time.Duration
	Deadline time.Duration
	Fence    int64
	Holder   int32
	Forever  bool
	// Renewing: its holder's renewals go on, so a deadline passed is a
	// renewal not back yet, not a lapse (see renewing.go).
	Renewing bool
	// Inferred: no acquired event said so; a denial showed the key exists.
	Inferred bool
}

// Unknown is the Holder of a lock that exists with no known holder.
const Unknown = -2

// MarkKind is a mark on a lock lane.
type MarkKind uint8

// The lock marks.
const (
	MarkRenewal       MarkKind = iota + 1 // the TTL was extended
	MarkLapse                             // the TTL lapsed while the holder still worked
	MarkExpired                           // the TTL lapsed (holder not working)
	MarkForeignDelete                     // a release deleted someone else's lock
	MarkReleaseFailed                     // a release was refused
	MarkLost                              // a watchdog gave the lock up
)

// Mark is a mark on a lock lane.
type Mark struct {
	Seq    int64
	T      time.Duration
	Kind   MarkKind
	Worker int32
}

// Vote is one node's answer to a Redlock attempt.
type Vote struct {
	Seq    int64
	Worker int32
	Node   int16
	OK     bool
}

// Lock is one lock key's history.
type Lock struct {
	Name  string
	Spans SpanList
	Marks []Mark
	Votes []Vote
	sums  summaries // of Marks

	crashed    int32 // a worker that crashed with an attempt on this lock unanswered
	lapsed     int32 // the holder whose TTL ran out, until anyone else holds it (−1: none)
	crashedAt  time.Duration
	crashedTTL time.Duration
}

func (l *Lock) current() *LockSpan {
	return l.Spans.last()
}

// Point is a value of the stock from Seq on.
type Point struct {
	Seq   int64
	T     time.Duration
	Stock int64
}

// Delay is one backoff.
type Delay struct {
	Seq   int64
	Delay time.Duration
}

// MarkerKind is a kind of timeline marker, for [ and ].
type MarkerKind uint8

// The markers.
const (
	MarkerViolation MarkerKind = iota + 1
	MarkerExpiry
	MarkerDeadlock
	MarkerCrash
	MarkerBeat
)

// Marker is a moment worth jumping to.
type Marker struct {
	Seq  int64
	T    time.Duration
	Kind MarkerKind
}

// Edge is a change of the wait-for graph: From waits for To (−1: waits for
// nobody any more) from Seq on.
type Edge struct {
	Seq      int64
	From, To int32
}

// Interval is a stretch of time from the event Seq to the event EndSeq
// (−1: still open).
type Interval struct {
	Seq, EndSeq int64
	T, End      time.Duration
}

// Count is a count from Seq on.
type Count struct {
	Seq int64
	N   int
}

// Timeline is the fold of a run's events so far.
type Timeline struct {
	// Fork is where a branch and its original part (−1: no branch): the
	// time axis marks it.
	Fork    time.Duration
	Workers []Worker
	Names   []string // the lanes' names, when the log gives its own (alice/2); else w02
	// Arrivals: a worker's lane is drawn once it has begun (a served
	// race's requests arrive one by one; the rest have not come).
	Arrivals bool
	Locks    []*Lock
	lockIdx  map[string]int
	waiters  map[string][]int32 // who may be waiting on each lock
	armed    []int              // locks with a holder, to check for TTL lapses

	HasStock  bool
	Initial   int64
	Stock     []Point
	Sales     []int64 // seqs of successful writes to the stock
	Backoffs  []Delay
	Markers   []Marker
	Edges     []Edge
	waitSnaps [][]int32 // waits after every snapEvery edges, made as they are folded

	// Violations are the seqs of the checker's violations.
	Violations []int64
	// Overlaps are the times two or more workers were in one resource's
	// critical section.
	Overlaps []Interval

	markerSums, overlapSums summaries
	// Lost is the lost-update count (scenario.Updates) from each Seq on.
	Lost []Count

	// OnceRes are the resources whose effect is allowed once; Applied the
	// writes to them, Entered the entries into critical sections.
	OnceRes  []string
	Applied  []Effect
	Entered  []Effect
	Finished []Effect
	once     map[string]bool

	// Nodes is every change of a Redis node, in log order.
	Nodes []Node
	nodes []Node // each node's latest
	// Servers are the announcements of the servers a run spawned.
	Servers []ServerLine
	// Nets are the network faults the log put on links, in log order.
	Nets    []NetLine
	netPeak int
	voted   bool // a node voted (Redlock's nodes hold locks of their own)

	// Strategy is the run's lock strategy, by name (what its lock is
	// comes from the traits: SetTraits).
	Strategy  string
	traits    *trait.Traits
	keyTraits map[string]trait.Traits

	inside map[string][]int32 // who is in each resource's critical section
	open   map[string]int     // the open overlap of each resource
	upd    check.Updates

	// Tallies is the run's tally at every event: the counts every view
	// shows come from it, and from nowhere else.
	Tallies *check.Tallies

	N    int           // events folded
	Last time.Duration // time of the last event folded
}

// New returns an empty timeline for a run with the given number of workers.
func New(workers int) *Timeline {
	tl := &Timeline{Fork: -1, Workers: make([]Worker, max(workers, 0)), lockIdx: map[string]int{}, waiters: map[string][]int32{}, inside: map[string][]int32{},
		Tallies: check.NewTallies()}
	for i := range tl.Workers {
		tl.Workers[i].waitsFor = -1
	}
	return tl
}

// Source is what a timeline folds: a scenario.Log.
type Source interface {
	Len() int
	At(i int) event.Event
}

// Catch folds every event of src not folded yet and reports how many.
func (tl *Timeline) Catch(src Source) int {
	n := src.Len()
	start := tl.N
	for i := tl.N; i < n; i++ {
		tl.Fold(src.At(i))
	}
	return n - start
}

// worker returns worker w, growing the list for logs whose header
// undercounts them.
func (tl *Timeline) worker(w int32) *Worker {
	if w < 0 || int(w) >= 1<<16 {
		return nil
	}
	for int(w) >= len(tl.Workers) {
		tl.Workers = append(tl.Workers, Worker{waitsFor: -1})
	}
	return &tl.Workers[w]
}

func (tl *Timeline) lock(name string) (*Lock, int) {
	if i, ok := tl.lockIdx[name]; ok {
		return tl.Locks[i], i
	}
	l := &Lock{Name: name, crashed: -1, lapsed: -1}
	tl.lockIdx[name] = len(tl.Locks)
	tl.Locks = append(tl.Locks, l)
	return l, len(tl.Locks) - 1
}

// Fold folds the next event (its Seq must be tl.N).
func (tl *Timeline) Fold(e event.Event) {
	seq := int64(tl.N)
	tl.N++
	tl.Tallies.Add(e)
	tl.Last = max(tl.Last, e.T)
	tl.lapse(seq, e.T)
	tl.foldNode(seq, &e)
	tl.foldServer(seq, &e)
	tl.foldNet(seq, &e)
	tl.foldEffect(seq, &e)
	drawAt := e.T
	w := tl.worker(e.Worker)
	var before themes.State
	if w != nil {
		before = w.state()
	}
	switch e.Kind {
	case event.KindAttempt, event.KindDenied, event.KindBackoff, event.KindWait:
		tl.foldAsk(seq, &e, w)
	case event.KindAcquired, event.KindRenewed, event.KindVote:
		tl.foldHold(seq, &e, w)
	case event.KindRelease, event.KindReleaseFailed:
		drawAt = tl.foldRelease(seq, &e, w, drawAt)
	case event.KindLockLost, event.KindRenewFailed, event.KindExpired:
		tl.foldLoss(seq, &e, w)
	case event.KindInit, event.KindWorkStart, event.KindWorkEnd, event.KindWrite, event.KindRead:
		tl.foldWork(seq, &e, w)
	case event.KindPause, event.KindCrash, event.KindResume, event.KindDone, event.KindDeadlock, event.KindBeat:
		tl.foldLife(seq, &e, w)
	case event.KindViolation:
		tl.addMarker(Marker{seq, e.T, MarkerViolation})
		tl.Violations = append(tl.Violations, seq)
		if w != nil {
			// A moment, not a state: it gets its cell, then the lane goes on.
			w.add(Span{seq, e.T, themes.Violation})
			w.add(Span{seq, e.T, w.state()})
			return
		}
	}
	if e.Kind == event.KindRead || e.Kind == event.KindWrite {
		before := tl.upd.Lost()
		tl.upd.Fold(&e)
		if n := tl.upd.Lost(); n != before {
			tl.Lost = append(tl.Lost, Count{seq, n})
		}
	}
	if w != nil {
		if after := w.state(); after != before || len(w.spans) == 0 {
			w.add(Span{seq, drawAt, after})
		}
	}
}

// add appends a span, never before the span it follows (nor before 0).
func (w *Worker) add(sp Span) {
	sp.T = max(sp.T, 0)
	if n := len(w.spans); n > 0 && sp.T < w.t(n-1) {
		sp.T = w.t(n - 1)
	}
	w.index.push(len(w.spans), sp.State)
	prev := uint8(noState)
	if n := len(w.spans); n > 0 {
		prev = uint8(w.st(n - 1))
	}
	w.tindex.push(len(w.spans), sp.T, uint8(sp.State), prev)
	w.spans = append(w.spans, uint64(sp.T)<<8|uint64(sp.State))
	w.seqs = append(w.seqs, uint32(sp.Seq))
}

// t is the time span i starts.
func (w *Worker) t(i int) time.Duration { return time.Duration(w.spans[i] >> 8) }

// st is span i's state.
func (w *Worker) st(i int) themes.State { return themes.State(w.spans[i] & 0xff) }

// span returns span i.
func (w *Worker) span(i int) Span {
	return Span{Seq: int64(w.seqs[i]), T: w.t(i), State: w.st(i)}
}

// Started reports whether worker w has a span at or before cursor k.
func (tl *Timeline) Started(w, k int) bool {
	if w < 0 || w >= len(tl.Workers) {
		return false
	}
	ws := &tl.Workers[w]
	return len(ws.seqs) > 0 && int64(ws.seqs[0]) <= int64(k)
}

// upTo is how many of w's spans are at or before cursor k.
func (w *Worker) upTo(k int) int {
	if n := len(w.seqs); n == 0 || int64(w.seqs[n-1]) <= int64(k) {
		return n // at the end of the log, as live
	}
	return sort.Search(len(w.seqs), func(i int) bool { return int64(w.seqs[i]) > int64(k) })
}

func (tl *Timeline) waitFor(seq int64, from, to int32, res string) {
	w := tl.worker(from)
	if w == nil || w.waitsFor == to {
		return
	}
	if to >= 0 && res != "" && w.waitRes != res {
		tl.waiters[res] = append(tl.waiters[res], from)
	}
	w.waitsFor, w.waitRes = to, res
	tl.addEdge(Edge{Seq: seq, From: from, To: to})
}

// handOver re-points everyone waiting on lock res to its new holder (−1:
// free), so the graph never shows a wait on someone who no longer holds it.
func (tl *Timeline) handOver(seq int64, res string, holder int32) {
	list := tl.waiters[res]
	keep := list[:0]
	for _, i := range list {
		w := &tl.Workers[i]
		if w.waitsFor < 0 || w.waitRes != res || i == holder {
			continue // no longer waiting on res
		}
		if holder < 0 {
			w.waitsFor, w.waitRes = -1, ""
			tl.addEdge(Edge{Seq: seq, From: i, To: -1})
			continue
		}
		if w.waitsFor != holder {
			w.waitsFor = holder
			tl.addEdge(Edge{Seq: seq, From: i, To: holder})
		}
		keep = append(keep, i)
	}
	tl.waiters[res] = keep
}

func (tl *Timeline) arm(i int) {
	for _, a := range tl.armed {
		if a == i {
			return
		}
	}
	tl.armed = append(tl.armed, i)
}

// lapse ends every held lock whose deadline passed before t.
func (tl *Timeline) lapse(seq int64, t time.Duration) {
	for j := 0; j < len(tl.armed); {
		l := tl.Locks[tl.armed[j]]
		cur := l.current()
		switch {
		case cur == nil || cur.Holder < 0 || cur.TTL <= 0:
			tl.armed = append(tl.armed[:j], tl.armed[j+1:]...)
		case cur.Deadline < t && !cur.Renewing:
			tl.expire(l, seq, cur.Deadline)
			tl.armed = append(tl.armed[:j], tl.armed[j+1:]...)
		default:
			j++
		}
	}
}

// expire ends l's current holding at time at.
func (tl *Timeline) expire(l *Lock, seq int64, at time.Duration) {
	cur := l.current()
	holder := cur.Holder
	kind := MarkExpired
	if w := tl.worker(holder); w != nil && w.inCS {
		kind = MarkLapse
		tl.addMarker(Marker{seq, at, MarkerExpiry})
	}
	l.addMark(Mark{seq, at, kind, holder})
	l.Spans.add(LockSpan{Seq: seq, T: at, Holder: -1})
	l.lapsed = holder
	tl.handOver(seq, l.Name, -1)
}
