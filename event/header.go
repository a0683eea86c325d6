package event

import (
	"math"
	"strconv"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
)

// Format and Version identify a locklab event log.
const (
	Format  = "locklab-events"
	Version = 2 // 2: operations carry "call" (when sent) and "outcome"; version 1 logs still read
)

// Header is the first line of an event log.
type Header struct {
	Format   string  `json:"format"`
	Version  int     `json:"version"`
	Scenario string  `json:"scenario"`
	Strategy string  `json:"strategy"`
	Params   Params  `json:"params"`
	Seed     uint64  `json:"seed"`
	Store    string  `json:"store"`
	Slowmo   float64 `json:"slowmo,omitempty"`
	// Time says how the run kept time: "simulated" (a seeded schedule:
	// the same seed gives the same log), or "real time: why".
	Time      string    `json:"time,omitempty"`
	Lanes     []string  `json:"lanes"`
	Tool      string    `json:"tool"`
	StartedAt time.Time `json:"started_at"`
	// Traits are what the run's lock is: its expiry, token, renewal,
	// server and nodes (absent when the strategy takes no lock, and in
	// logs written before they were recorded: see TraitsOf).
	Traits *trait.Traits `json:"traits,omitempty"`
	// KeyTraits are the traits of the lock keys whose lock differs from
	// the run's (trade-offs' one store per key).
	KeyTraits map[string]trait.Traits `json:"key_traits,omitempty"`
}

// AppendJSON appends e as one JSON object (no newline) to b.
func AppendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.T.Microseconds(), 10)
	if e.Has&HasCall != 0 {
		b = append(b, `,"call":`...)
		b = strconv.AppendInt(b, e.Call.Microseconds(), 10)
	}
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(e.Worker), 10)
	b = append(b, `,"kind":"`...)
	b = append(b, e.Kind.String()...)
	b = append(b, '"')
	b = appendStr(b, "res", e.Res)
	b = appendStr(b, "token", e.Token)
	if e.Has&HasFence != 0 {
		b = append(b, `,"fence":`...)
		b = strconv.AppendInt(b, e.Fence, 10)
	}
	if e.Has&HasTTL != 0 {
		b = append(b, `,"ttl_ms":`...)
		b = appendMillis(b, e.TTL)
	}
	if e.Has&HasDelay != 0 {
		b = append(b, `,"delay_ms":`...)
		b = appendMillis(b, e.Delay)
	}
	if e.Has&HasStock != 0 {
		b = append(b, `,"stock":`...)
		b = strconv.AppendInt(b, e.Stock, 10)
	}
	if e.Has&HasNode != 0 {
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, int64(e.Node), 10)
	}
	if e.Has&HasPeer != 0 {
		b = append(b, `,"peer":`...)
		b = strconv.AppendInt(b, int64(e.Peer), 10)
	}
	if e.Has&HasAttempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if e.Has&HasOK != 0 {
		b = append(b, `,"ok":`...)
		b = strconv.AppendBool(b, e.OK)
	}
	if e.Outcome != OutcomeOK {
		b = appendStr(b, "outcome", e.Outcome.String())
	}
	b = appendStr(b, "code", e.Code)
	b = appendStr(b, "msg", e.Msg)
	return append(b, '}')
}

func appendStr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendQuote(b, v)
}

// Wire is an event as read by encoding/json; pointers tell present fields.
type Wire struct {
	Seq     int64   `json:"seq"`
	T       *int64  `json:"t"`
	Call    *int64  `json:"call"`
	Outcome string  `json:"outcome"`
	Worker  *int32  `json:"worker"`
	Kind    string  `json:"kind"`
	Res     string  `json:"res"`
	Token   string  `json:"token"`
	Fence   *int64  `json:"fence"`
	TTL     *Millis `json:"ttl_ms"`
	Delay   *Millis `json:"delay_ms"`
	Stock   *int64  `json:"stock"`
	Node    *int16  `json:"node"`
	Peer    *int32  `json:"peer"`
	Attempt *int32  `json:"attempt"`
	OK      *bool   `json:"ok"`
	Code    string  `json:"code"`
	Msg     string  `json:"msg"`
}

// Event is the event w holds.
func (w *Wire) Event() Event {
	e := Event{Seq: w.Seq, Kind: ParseKind(w.Kind), Res: w.Res, Token: w.Token, Code: w.Code, Msg: w.Msg, Worker: System}
	if w.T != nil {
		e.T = durationOf(*w.T)
	}
	if w.Worker != nil {
		e.Worker = *w.Worker
	}
	if w.Call != nil {
		e.Call, e.Has = durationOf(*w.Call), e.Has|HasCall
	}
	e.Outcome, _ = ParseOutcome(w.Outcome)
	if w.Fence != nil {
		e.Fence, e.Has = *w.Fence, e.Has|HasFence
	}
	if w.TTL != nil {
		e.TTL, e.Has = w.TTL.D(), e.Has|HasTTL
	}
	if w.Delay != nil {
		e.Delay, e.Has = w.Delay.D(), e.Has|HasDelay
	}
	if w.Stock != nil {
		e.Stock, e.Has = *w.Stock, e.Has|HasStock
	}
	if w.Node != nil {
		e.Node, e.Has = *w.Node, e.Has|HasNode
	}
	if w.Peer != nil {
		e.Peer, e.Has = *w.Peer, e.Has|HasPeer
	}
	if w.Attempt != nil {
		e.Attempt, e.Has = *w.Attempt, e.Has|HasAttempt
	}
	if w.OK != nil {
		e.OK, e.Has = *w.OK, e.Has|HasOK
	}
	return e
}

// TraitsOf is what lock key's lock is in h's run, and false when the run
// takes no lock there (or its log was written before headers recorded
// traits, and they were not filled in from the registry: WithTraits).
func (h *Header) TraitsOf(key string) (trait.Traits, bool) {
	run, keys := h.Traits, h.KeyTraits
	if t, ok := keys[key]; ok {
		return t, true
	}
	if run == nil {
		return trait.Traits{}, false
	}
	return *run, true
}

// LockTraits are the traits of every lock of h's run: the run's (nil when
// none), and those of keys whose lock is another.
func (h *Header) LockTraits() (*trait.Traits, map[string]trait.Traits) {
	return h.Traits, h.KeyTraits
}

// CodeUndo is the Code of the release events that undo a Redlock acquire
// short of its quorum, one per node asked: the votes it had are freed,
// but no held lock was released.
const CodeUndo = lock.OpUndo

// IsUndo reports whether e undoes a partial acquire's votes.
func IsUndo(e *Event) bool {
	return (e.Kind == KindRelease || e.Kind == KindReleaseFailed) && e.Code == CodeUndo
}

// durationOf is us microseconds, saturated instead of wrapped around.
func durationOf(us int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Microsecond)
	switch {
	case us > most:
		return math.MaxInt64
	case us < -most:
		return math.MinInt64
	}
	return time.Duration(us) * time.Microsecond
}
