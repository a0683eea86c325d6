package event

import (
	"encoding/binary"
	"sync/atomic"
	"time"
)

// record is an event as stored, 24 bytes and free of pointers, so the
// garbage collector never scans the log, however long it grows. The fields
// most events leave zero are kept apart, in the log's pool, as varints:
// only those that are not zero (set says which). Strings live in the log's
// string table.
type record struct {
	T      time.Duration
	Worker int32
	page   uint32 // where in the pool its other fields are
	off    uint16
	set    uint16 // which of the pooled fields are not zero
	Has    Field
	Kind   Kind
	OK     bool
}

// The pooled fields, in the order they are written.
const (
	setCall uint16 = 1 << iota // kept as T − Call: a few bytes
	setFence
	setStock
	setTTL
	setDelay
	setPeer
	setAttempt
	setNode
	setRes
	setToken
	setCode
	setMsg
	setOutcome
	pooledFields = iota
)

const (
	poolPage = 1 << 16
	// maxPooled is the most bytes one event's pooled fields take.
	maxPooled = pooledFields * binary.MaxVarintLen64
)

// pool holds the records' pooled fields in pages written once: bytes
// below the published events' are never written again, so readers read
// them without a lock.
type pool struct {
	dir  atomic.Pointer[[]*[poolPage]byte]
	page int // the page being filled, under the log's mutex
	off  int
}

func (p *pool) init() {
	dir := []*[poolPage]byte{new([poolPage]byte)}
	p.dir.Store(&dir)
}

// room returns where maxPooled bytes can be written, starting a page when
// the current one has not that many left.
func (p *pool) room() (*[poolPage]byte, int) {
	dir := *p.dir.Load()
	if p.off+maxPooled > poolPage {
		grown := append(dir[:len(dir):len(dir)], new([poolPage]byte))
		p.dir.Store(&grown)
		dir = grown
		p.page, p.off = len(grown)-1, 0
	}
	return dir[p.page], p.off
}

// put stores e (stamped at t) in r: the fields every event has in r, the
// others in the pool. Called under the log's mutex.
func (l *Log) put(r *record, e *Event, t time.Duration) {
	pg, off := l.pool.room()
	b := pg[off:off:poolPage]
	var set uint16
	zig := func(bit uint16, v int64) {
		if v != 0 {
			set |= bit
			b = binary.AppendVarint(b, v)
		}
	}
	str := func(bit uint16, s string) {
		if s != "" {
			set |= bit
			b = binary.AppendUvarint(b, uint64(l.strs.intern(s)))
		}
	}
	if e.Call != 0 {
		set |= setCall
		b = binary.AppendVarint(b, int64(t-e.Call))
	}
	zig(setFence, e.Fence)
	zig(setStock, e.Stock)
	zig(setTTL, int64(e.TTL))
	zig(setDelay, int64(e.Delay))
	zig(setPeer, int64(e.Peer))
	zig(setAttempt, int64(e.Attempt))
	zig(setNode, int64(e.Node))
	str(setRes, e.Res)
	str(setToken, e.Token)
	str(setCode, e.Code)
	str(setMsg, e.Msg)
	zig(setOutcome, int64(e.Outcome))
	r.T, r.Worker, r.Has, r.Kind, r.OK = t, e.Worker, e.Has, e.Kind, e.OK
	r.page, r.off, r.set = uint32(l.pool.page), uint16(off), set
	l.pool.off += len(b)
}

// event is record i as an event.
func (l *Log) event(i int, r *record) Event {
	e := Event{Seq: int64(i), T: r.T, Worker: r.Worker, Has: r.Has, Kind: r.Kind, OK: r.OK}
	if r.set == 0 {
		return e
	}
	b := (*l.pool.dir.Load())[r.page][r.off:]
	zig := func(bit uint16) int64 {
		if r.set&bit == 0 {
			return 0
		}
		v, n := binary.Varint(b)
		b = b[n:]
		return v
	}
	str := func(bit uint16) string {
		if r.set&bit == 0 {
			return ""
		}
		v, n := binary.Uvarint(b)
		b = b[n:]
		return l.strs.get(uint32(v))
	}
	if r.set&setCall != 0 {
		e.Call = r.T - time.Duration(zig(setCall))
	}
	e.Fence, e.Stock = zig(setFence), zig(setStock)
	e.TTL, e.Delay = time.Duration(zig(setTTL)), time.Duration(zig(setDelay))
	e.Peer, e.Attempt, e.Node = int32(zig(setPeer)), int32(zig(setAttempt)), int16(zig(setNode))
	e.Res, e.Token, e.Code, e.Msg = str(setRes), str(setToken), str(setCode), str(setMsg)
	e.Outcome = Outcome(zig(setOutcome))
	return e
}
