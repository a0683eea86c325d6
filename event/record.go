package event

import (
	"encoding/binary"
	"sync/atomic"
	"time"
)

// record is an event as stored, 16 bytes and free of pointers, so the
// garbage collector never scans the log, however long it grows. Its time
// is kept in µs after its chunk's first event's (t0), its kind, flags and
// the place of its other fields in one word. The fields most events leave
// zero are kept apart, in the log's pool, as varints: only those that are
// not zero (set says which). Strings live in the log's string table. A
// time that is not a whole µs after t0, or more than 2³² µs after it,
// is kept in the pool too.
type record struct {
	dt     uint32 // µs after the chunk's t0, unless recBigT
	Worker int32
	bits   uint64 // kind | ok | recBigT | pool offset after the chunk's p0 | Has | set
}

// The parts of a record's bits.
const (
	recOK      = 1 << 8
	recBigT    = 1 << 9 // the time is in the pool, first
	recOffBits = 10     // the pool offset after the chunk's p0: 20 bits
	recOffMask = 1<<20 - 1
	recHasBits = 32
	recSetBits = 48
)

// A chunk's pooled bytes, with the ends of the pages it skips, stay within
// what a record's offset counts (the build fails otherwise).
const _ = uint(recOffMask - (chunkSize*maxPooled + (chunkSize*maxPooled/poolPage+2)*maxPooled))

func (r *record) kind() Kind   { return Kind(r.bits) }
func (r *record) has() Field   { return Field(r.bits >> recHasBits) }
func (r *record) set() uint16  { return uint16(r.bits >> recSetBits) }
func (r *record) off() int64   { return int64(r.bits>>recOffBits) & recOffMask }
func (r *record) pooled() bool { return r.bits&(recBigT|0xffff<<recSetBits) != 0 }

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
	poolBits = 16
	poolPage = 1 << poolBits
	// maxPooled is the most bytes one event's pooled fields take, its
	// time included: a chunk's take less than 2²⁰ (recOffMask).
	maxPooled = (pooledFields + 1) * binary.MaxVarintLen64
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

// at is where the next pooled bytes go, counted from the pool's start.
func (p *pool) at() int64 { return int64(p.page)<<poolBits | int64(p.off) }

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

// put stores e (stamped at t) in r, of chunk c: the fields every event has
// in r, the others in the pool. Called under the log's mutex.
func (l *Log) put(c *chunk, r *record, e *Event, t time.Duration) {
	pg, off := l.pool.room()
	b := pg[off:off:poolPage]
	var set uint16
	var bits uint64
	if dt := t - c.t0; dt >= 0 && dt%time.Microsecond == 0 && dt/time.Microsecond <= 1<<32-1 {
		r.dt = uint32(dt / time.Microsecond)
	} else {
		r.dt, bits = 0, recBigT
		b = binary.AppendVarint(b, int64(t))
	}
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
	bits |= uint64(e.Kind) | uint64(e.Has)<<recHasBits | uint64(set)<<recSetBits
	if e.OK {
		bits |= recOK
	}
	if len(b) > 0 {
		bits |= uint64(int64(l.pool.page)<<poolBits|int64(off)-c.p0) << recOffBits
	}
	r.Worker, r.bits = e.Worker, bits
	l.pool.off += len(b)
}

// event is record i, of chunk c, as an event.
func (l *Log) event(i int, c *chunk, r *record) Event {
	e := Event{Seq: int64(i), T: c.t0 + time.Duration(r.dt)*time.Microsecond, Worker: r.Worker, Has: r.has(), Kind: r.kind(), OK: r.bits&recOK != 0}
	if !r.pooled() {
		return e
	}
	at := c.p0 + r.off()
	b := (*l.pool.dir.Load())[at>>poolBits][at&(poolPage-1):]
	if r.bits&recBigT != 0 {
		t, n := binary.Varint(b)
		e.T, b = time.Duration(t), b[n:]
	}
	set := r.set()
	zig := func(bit uint16) int64 {
		if set&bit == 0 {
			return 0
		}
		v, n := binary.Varint(b)
		b = b[n:]
		return v
	}
	str := func(bit uint16) string {
		if set&bit == 0 {
			return ""
		}
		v, n := binary.Uvarint(b)
		b = b[n:]
		return l.strs.get(uint32(v))
	}
	if set&setCall != 0 {
		e.Call = e.T - time.Duration(zig(setCall))
	}
	e.Fence, e.Stock = zig(setFence), zig(setStock)
	e.TTL, e.Delay = time.Duration(zig(setTTL)), time.Duration(zig(setDelay))
	e.Peer, e.Attempt, e.Node = int32(zig(setPeer)), int32(zig(setAttempt)), int16(zig(setNode))
	e.Res, e.Token, e.Code, e.Msg = str(setRes), str(setToken), str(setCode), str(setMsg)
	e.Outcome = Outcome(zig(setOutcome))
	return e
}
