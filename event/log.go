package event

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	clockpkg "github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/untrusted"
)

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// chunk is chunkSize records: their times are counted from t0, their
// pooled fields from p0 (set before the chunk's first event is published).
type chunk struct {
	recs [chunkSize]record
	t0   time.Duration // the first record's time
	p0   int64         // where in the pool its fields start
}

const strChunk = 1 << 10

// strtab interns the strings of a log. Index 0 is "".
type strtab struct {
	idx map[string]uint32
	n   uint32
	dir atomic.Pointer[[]*[strChunk]string]
	// recent are strings interned lately, by length and first byte: a
	// worker's events repeat their key, token and message, and comparing
	// with one of them costs less than hashing for the map.
	recent [16]struct {
		s string
		i uint32
	}
}

func (t *strtab) init() {
	t.idx = map[string]uint32{"": 0}
	dir := []*[strChunk]string{new([strChunk]string)}
	t.dir.Store(&dir)
	t.n = 1
}

// intern returns s's index, adding it if new. Called under the log's mutex.
func (t *strtab) intern(s string) uint32 {
	if s == "" {
		return 0
	}
	c := &t.recent[(len(s)^int(s[0]))&(len(t.recent)-1)]
	if len(c.s) == len(s) && (unsafe.StringData(c.s) == unsafe.StringData(s) || c.s == s) {
		return c.i // the same bytes, most often the very same string
	}
	if i, ok := t.idx[s]; ok {
		c.s, c.i = s, i
		return i
	}
	i := t.n
	dir := *t.dir.Load()
	if int(i/strChunk) == len(dir) {
		grown := append(dir[:len(dir):len(dir)], new([strChunk]string))
		t.dir.Store(&grown)
		dir = grown
	}
	// Stored clean, looked up as given: a server's or a participant's words
	// reach the views without their control sequences.
	dir[i/strChunk][i%strChunk] = untrusted.Line(s)
	t.idx[s] = i
	t.n++
	c.s, c.i = s, i
	return i
}

func (t *strtab) get(i uint32) string {
	if i == 0 {
		return ""
	}
	return (*t.dir.Load())[i/strChunk][i%strChunk]
}

// Deriver folds each event as it is appended and may derive events from it
// (the checker's violations), which are appended right after it.
type Deriver interface {
	Fold(e Event) []Event
}

// Now is a source of virtual time.
type Now interface {
	Now() time.Duration
}

// Log is a run's append-only event log. Emit never blocks for long: one
// short critical section, no allocation in steady state, no I/O. Readers
// never block writers: events below Len are immutable and read lock-free.
type Log struct {
	mu     sync.Mutex
	clock  Now
	vclock *clockpkg.Clock // clock, when it is one
	derive Deriver
	n      int64 // appended, under mu
	lastT  time.Duration
	strs   strtab
	pool   pool
	dir    atomic.Pointer[[]*chunk]
	pub    atomic.Int64 // published: readable by anyone

	// spare is the next chunk, allocated and its pages touched by a
	// goroutine of its own while the current chunk fills, so that no
	// worker's Emit waits for the memory the log grows into.
	spare     atomic.Pointer[chunk]
	preparing atomic.Bool

	mismatch string // a loaded log: how its recorded derived events differ from its events'

	stepper func() uint64 // a simulated run's scheduler steps so far
	stepAt  []uint64      // under mu: the step each event was logged at, with stepper
}

// SetMismatch records how the derived events recorded in a loaded log's
// file differ from those its primary events give.
func (l *Log) SetMismatch(m string) { l.mismatch = m }

// SetStepper has the log note, for each event appended after it, the step
// of a simulated run's scheduler it was logged at (StepAt).
func (l *Log) SetStepper(steps func() uint64) { l.stepper = steps }

// StepAt is the scheduler's step at which event i was logged, with a
// stepper (SetStepper); 0 without one.
func (l *Log) StepAt(i int) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.stepAt) {
		return 0
	}
	return l.stepAt[i]
}

// Mismatch says how the derived events recorded in a loaded log's file
// differ from those its primary events give (which the log holds instead),
// or "" when they agree.
func (l *Log) Mismatch() string { return l.mismatch }

// NewLog returns an empty log stamped by clock. derive may be nil.
func NewLog(clock Now, derive Deriver) *Log {
	l := &Log{clock: clock, derive: derive}
	l.vclock, _ = clock.(*clockpkg.Clock)
	l.strs.init()
	l.pool.init()
	dir := make([]*chunk, 0, 64)
	l.dir.Store(&dir)
	return l
}

// Emit stamps e with the next sequence number and the current virtual time
// and appends it, followed by whatever the deriver derives from it.
func (l *Log) Emit(e Event) {
	t := l.now() // before the lock: the answer is in, however long others hold it
	l.mu.Lock()
	l.lastT = max(l.lastT, t)
	l.appendLocked(&e, l.lastT)
	l.deriveLocked(&e)
	l.pub.Store(l.n)
	l.mu.Unlock()
}

// deriveLocked appends what the deriver derives from e. The deriver gets
// a copy of e, so e stays on the caller's stack: Emit allocates nothing.
func (l *Log) deriveLocked(e *Event) {
	var ds []Event
	if l.derive != nil {
		ds = l.derive.Fold(*e)
	}
	for _, d := range ds {
		l.appendLocked(&d, l.lastT)
	}
}

// Append adds an event with its recorded time (Seq becomes its index),
// without deriving anything: for loading a recorded log.
func (l *Log) Append(e Event) {
	l.mu.Lock()
	t := e.T
	l.lastT = max(l.lastT, t)
	l.appendLocked(&e, t)
	l.pub.Store(l.n)
	l.mu.Unlock()
}

// now is the clock's time to the microsecond, 0 without a clock. The
// store's clock is called directly, not through the interface.
func (l *Log) now() time.Duration {
	var t time.Duration
	switch {
	case l.vclock != nil:
		t = l.vclock.Now()
	case l.clock != nil:
		t = l.clock.Now()
	}
	return t.Truncate(time.Microsecond)
}

// appendLocked appends e, stored at time t: the log's newest time, l.lastT,
// or a loaded event's own.
func (l *Log) appendLocked(e *Event, t time.Duration) {
	if l.stepper != nil {
		l.stepAt = append(l.stepAt, l.stepper())
	}
	e.T = l.lastT
	e.Seq = l.n
	dir := *l.dir.Load()
	ci := int(l.n >> chunkBits)
	if ci == len(dir) {
		c := l.spare.Swap(nil)
		if c == nil {
			c = new(chunk)
		}
		c.t0, c.p0 = t, l.pool.at()
		grown := append(dir[:len(dir):len(dir)], c)
		l.dir.Store(&grown)
		dir = grown
	} else if l.n&chunkMask == chunkSize/2 && l.preparing.CompareAndSwap(false, true) {
		go l.prepare()
	}
	c := dir[ci]
	if e.Has&HasCall != 0 && e.Call > e.T {
		e.Call = e.T // an answer never arrives before its question was sent
	}
	l.put(c, &c.recs[l.n&chunkMask], e, t)
	l.n++
}

// prepare makes the next chunk ready: allocated, every page written once
// (the operating system maps a page on its first write), and left in spare.
func (l *Log) prepare() {
	defer l.preparing.Store(false)
	if l.spare.Load() != nil {
		return
	}
	c := new(chunk)
	const perPage = 4096 / unsafe.Sizeof(record{})
	for i := 0; i < len(c.recs); i += int(perPage) {
		c.recs[i].dt = 0
	}
	l.spare.Store(c)
}

// HeldBytes is what the log's events take: their records and their
// pooled fields (not the strings they name, each kept once).
func (l *Log) HeldBytes() int {
	return len(*l.dir.Load())*int(unsafe.Sizeof(chunk{})) + len(*l.pool.dir.Load())*poolPage
}

// Len is the number of events readable now.
func (l *Log) Len() int { return int(l.pub.Load()) }

// At returns event i (i < Len).
func (l *Log) At(i int) Event {
	c := (*l.dir.Load())[i>>chunkBits]
	return l.event(i, c, &c.recs[i&chunkMask])
}

// KindAt returns the kind of event i (i < Len), without building the event.
func (l *Log) KindAt(i int) Kind {
	dir := *l.dir.Load()
	return dir[i>>chunkBits].recs[i&chunkMask].kind()
}

// Read appends events [from, Len) to dst and returns it with the new cursor.
func (l *Log) Read(from int, dst []Event) ([]Event, int) {
	to := l.Len()
	dir := *l.dir.Load()
	for i := from; i < to; i++ {
		c := dir[i>>chunkBits]
		dst = append(dst, l.event(i, c, &c.recs[i&chunkMask]))
	}
	return dst, to
}

// Events returns a copy of every event readable now.
func (l *Log) Events() []Event {
	evs, _ := l.Read(0, make([]Event, 0, l.Len()))
	return evs
}

// EmitAt appends e at its own time e.T (never before the newest event),
// folded by the log's deriver like any emitted event: for events that
// happened in another process.
func (l *Log) EmitAt(e Event) {
	l.mu.Lock()
	l.lastT = max(l.lastT, e.T.Truncate(time.Microsecond))
	l.appendLocked(&e, l.lastT)
	l.deriveLocked(&e)
	l.pub.Store(l.n)
	l.mu.Unlock()
}

// Mark is a time no event appended after it returns will be stamped
// before: a watermark for whoever forwards the log elsewhere.
func (l *Log) Mark() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clock == nil {
		return l.lastT
	}
	return max(l.lastT, l.clock.Now().Truncate(time.Microsecond))
}
