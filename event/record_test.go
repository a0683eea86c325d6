package event_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
)

// An event comes back from the log as it went in, whatever its fields
// hold: the compact record loses nothing.
func TestLogKeepsEveryFieldExactly(t *testing.T) {
	evs := []event.Event{
		{T: 5 * time.Second, Kind: event.KindAcquired, Worker: 3, Res: "lock:stock", Token: "tok", Fence: 7, TTL: 2 * time.Second, Attempt: 2, Has: event.HasFence | event.HasTTL | event.HasAttempt | event.HasCall, Call: 4 * time.Second},
		{T: 6 * time.Second, Kind: event.KindError, Worker: -1, Peer: math.MinInt32, Node: math.MaxInt16, Outcome: event.OutcomeIndeterminate, Code: "write", Msg: "i/o timeout", OK: true},
		{T: math.MaxInt64, Kind: event.KindWrite, Worker: math.MaxInt32, Stock: math.MinInt64, Fence: math.MaxInt64, Delay: -1, TTL: math.MinInt64, Call: math.MinInt64, Attempt: math.MaxInt32, Node: -1, Outcome: 255},
		{T: 7 * time.Second, Kind: event.KindBeat, Worker: 0, Call: 9 * time.Second}, // a Call after T, with no HasCall
		{},
	}
	l := event.NewLog(nil, nil)
	for _, e := range evs {
		l.Append(e)
	}
	for i, want := range evs {
		want.Seq = int64(i)
		if got := l.At(i); got != want {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// Events whose pooled fields are all at their widest, at times a record
// cannot count from its chunk's first (a nanosecond off a µs, before it,
// hours after it), over several chunks, come back exactly, and KindAt
// says their kinds.
func TestLogKeepsWideEventsOverChunks(t *testing.T) {
	long := strings.Repeat("x", 256)
	l := event.NewLog(nil, nil)
	var evs []event.Event
	for i := range 3*4096 + 17 {
		e := event.Event{T: time.Duration(i) * time.Microsecond, Kind: event.Kind(i%20 + 1), Worker: int32(i%3 - 1), OK: i%2 == 0}
		switch i % 4 {
		case 1:
			e.T += time.Nanosecond
		case 2:
			e.T = -time.Duration(i) * time.Hour
		case 3:
			e.T = time.Duration(i) * 2 * time.Hour
		}
		if i%5 != 0 {
			e.Call, e.Has = time.Duration(math.MinInt64+int64(i)), event.HasCall|event.HasFence|event.HasStock|event.HasTTL|event.HasDelay|event.HasPeer|event.HasAttempt|event.HasNode|event.HasOK
			e.Fence, e.Stock, e.TTL, e.Delay = math.MinInt64, math.MaxInt64, math.MinInt64, math.MaxInt64
			e.Peer, e.Attempt, e.Node, e.Outcome = math.MinInt32, math.MaxInt32, math.MinInt16, 255
			e.Res, e.Token, e.Code, e.Msg = long+"r"+strconv.Itoa(i%7), long+"t"+strconv.Itoa(i), long+"c", long+"m"
		}
		evs = append(evs, e)
		l.Append(e)
	}
	for i, want := range evs {
		want.Seq = int64(i)
		if want.Has&event.HasCall != 0 && want.Call > want.T {
			want.Call = want.T
		}
		if got := l.At(i); got != want {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got, want)
		}
		if k := l.KindAt(i); k != want.Kind {
			t.Fatalf("event %d: KindAt %v, want %v", i, k, want.Kind)
		}
	}
}

// BenchmarkLogHeld is the bytes a log keeps per event of a busy run:
// attempts, denials, backoffs and sales of many workers.
func BenchmarkLogHeld(b *testing.B) {
	const n = 1 << 20
	for b.Loop() {
		l := event.NewLog(nil, nil)
		for i := range n {
			w := int32(i % 1000)
			e := event.Event{T: time.Duration(i) * 7 * time.Microsecond, Worker: w, Res: "lock:stock", Attempt: int32(i%11 + 1), Has: event.HasAttempt}
			switch i % 4 {
			case 0:
				e.Kind, e.TTL, e.Has = event.KindAttempt, 5*time.Second, e.Has|event.HasTTL
			case 1:
				e.Kind, e.Call, e.Has = event.KindDenied, e.T-300*time.Microsecond, e.Has|event.HasCall
			case 2:
				e.Kind, e.Delay, e.Has = event.KindBackoff, time.Duration(i%5000)*time.Millisecond, e.Has|event.HasDelay
			case 3:
				e.Kind, e.Token, e.Fence, e.Has = event.KindAcquired, "t"+string(rune('a'+i%26)), int64(i), e.Has|event.HasFence
			}
			l.Append(e)
		}
		b.ReportMetric(float64(l.HeldBytes())/n, "held-B/event")
	}
}
