package scenario

import (
	"sync"
	"sync/atomic"
	"time"
)

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

type chunk [chunkSize]Event

// Deriver folds each event as it is appended and may derive events from it
// (the checker's violations), which are appended right after it.
type Deriver interface {
	Fold(e *Event) []Event
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
	derive Deriver
	n      int64 // appended, under mu
	lastT  time.Duration
	dir    atomic.Pointer[[]*chunk]
	pub    atomic.Int64 // published: readable by anyone
}

// NewLog returns an empty log stamped by clock. derive may be nil.
func NewLog(clock Now, derive Deriver) *Log {
	l := &Log{clock: clock, derive: derive}
	dir := make([]*chunk, 0, 64)
	l.dir.Store(&dir)
	return l
}

// Emit stamps e with the next sequence number and the current virtual time
// and appends it, followed by whatever the deriver derives from it.
func (l *Log) Emit(e Event) {
	l.mu.Lock()
	p := l.appendLocked(&e, true)
	if l.derive != nil {
		for _, d := range l.derive.Fold(p) {
			l.appendLocked(&d, false)
		}
	}
	l.pub.Store(l.n)
	l.mu.Unlock()
}

// Append adds an event with its recorded time (Seq becomes its index),
// without deriving anything: for loading a recorded log.
func (l *Log) Append(e Event) {
	l.mu.Lock()
	t := e.T
	p := l.appendLocked(&e, false)
	p.T = t
	l.lastT = max(l.lastT, t)
	l.pub.Store(l.n)
	l.mu.Unlock()
}

func (l *Log) appendLocked(e *Event, stamp bool) *Event {
	if stamp && l.clock != nil {
		t := l.clock.Now().Truncate(time.Microsecond)
		l.lastT = max(l.lastT, t)
	}
	e.T = l.lastT
	e.Seq = l.n
	dir := *l.dir.Load()
	ci := int(l.n >> chunkBits)
	if ci == len(dir) {
		grown := append(dir[:len(dir):len(dir)], new(chunk))
		l.dir.Store(&grown)
		dir = grown
	}
	p := &dir[ci][l.n&chunkMask]
	*p = *e
	l.n++
	return p
}

// Len is the number of events readable now.
func (l *Log) Len() int { return int(l.pub.Load()) }

// At returns event i (i < Len). The event must not be modified.
func (l *Log) At(i int) *Event {
	dir := *l.dir.Load()
	return &dir[i>>chunkBits][i&chunkMask]
}

// Read appends events [from, Len) to dst and returns it with the new cursor.
func (l *Log) Read(from int, dst []Event) ([]Event, int) {
	to := l.Len()
	dir := *l.dir.Load()
	for i := from; i < to; {
		c := dir[i>>chunkBits]
		end := min(to, (i&^chunkMask)+chunkSize)
		dst = append(dst, c[i&chunkMask:end-(i&^chunkMask)]...)
		i = end
	}
	return dst, to
}

// Events returns a copy of every event readable now.
func (l *Log) Events() []Event {
	evs, _ := l.Read(0, make([]Event, 0, l.Len()))
	return evs
}
