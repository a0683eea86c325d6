package workshop

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// collector reads a round's stream and appends its events to the host's
// log in the order of the Redis server's clock: each attendee's events come
// in order, and an event is appended only once every attendee still racing
// has said it has nothing earlier to send (its watermark).
type collector struct {
	h      *Host
	r      *Round
	st     *store.Store
	stream string
	run    *scenario.Run
	from   map[string]*inbox
	// last is where the next read starts: at first the ID the server's
	// clock gave just before the round was published (no entry before it
	// is of this round), then just past the last entry taken.
	last    string
	ready   chan struct{} // run is set
	mu      sync.Mutex
	refused refusals
	// tokens names the holder of each lock token appended so far, so a
	// wait on a lock another machine holds names its holder.
	tokens map[string]int32
	locks  handovers
}

// inbox is one attendee's events not yet appended.
type inbox struct {
	a     Attendee
	evs   []event.Event // T: server µs
	mark  int64         // server µs: nothing earlier is still to come
	ended bool          // sent its last event, or gone
	done  []bool        // by worker: its outcome is in
	heard time.Time
	key   []byte // its batches' HMAC key this round (nil: it has none, all refused)
	n     int64  // the last batch taken: batches count from 1
	// shift moves its stamps later, as far as a lock hand-over showed its
	// clock's sync to be behind; syncErr is the sync's own error bound.
	shift, syncErr time.Duration
}

func (c *collector) collect(ctx context.Context) error {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.from = map[string]*inbox{}
	for _, a := range c.r.Attendees {
		in := &inbox{a: a, done: make([]bool, a.Workers), heard: time.Now().Add(c.h.cfg.Lead)}
		in.key, _ = batchKey(c.h.key, a.Key, c.r.ID, a.Name)
		c.from[a.Name] = in
	}
	nextCheck := time.Now().Add(time.Second)
	for !c.finished() {
		if _, err := c.read(ctx, readBlock); err != nil {
			return err
		}
		if time.Now().After(nextCheck) {
			c.checkPresence(ctx)
			nextCheck = time.Now().Add(500 * time.Millisecond)
		}
		c.release(false)
	}
	c.release(true)
	return nil
}

// read takes the stream's next entries, waiting up to block for some
// (0: not at all), and says how many it took. The stream is polled: its
// entries are fetched by a script, which cannot block.
func (c *collector) read(ctx context.Context, block time.Duration) (int, error) {
	deadline := time.Now().Add(block)
	for {
		es, err := fetch(ctx, c.st.Client(), c.stream, c.last)
		switch {
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case err != nil:
			return 0, fmt.Errorf("reading the attendees' events: %w", err)
		}
		for _, e := range es {
			c.last = "(" + e.id
			c.take(e)
		}
		if len(es) > 0 || block <= 0 || time.Now().After(deadline) {
			return len(es), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(pollGap):
		}
	}
}

// pollGap is how long the host waits before asking an empty stream again.
const pollGap = 10 * time.Millisecond

func (c *collector) finished() bool {
	for _, in := range c.from {
		if !in.ended {
			return false
		}
	}
	return true
}

// take queues one stream entry: a batch of one attendee's events, if it is
// of this round, signed with the attendee's key and not one already taken.
func (c *collector) take(e entry) {
	in := c.from[e.fields["a"]]
	if e.size > 0 {
		c.refuse(refusedSize, in, e.size)
		return
	}
	b, mac, ok := parseBatch(e.fields)
	switch {
	case in == nil && ok && b.round != c.r.ID:
		c.refuse(refusedRound, nil, 0)
		return
	case in == nil:
		c.refuse(refusedStranger, nil, 0)
		return
	case ok && b.round != c.r.ID:
		c.refuse(refusedRound, in, 0)
		return
	case !ok || in.key == nil || !b.verify(in.key, mac):
		c.refuse(refusedForged, in, 0)
		return
	case b.n <= in.n:
		c.refuse(refusedReplayed, in, 0)
		return
	}
	in.n = b.n
	if in.ended {
		return // already given up on
	}
	in.heard = time.Now()
	if len(in.evs)+bytes.Count(b.body, []byte{'\n'})+1 > maxQueued {
		c.refuse(refusedFlood, in, 0)
		return
	}
	for _, line := range bytes.Split(b.body, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		e, err := event.DecodeEvent(line)
		if err != nil || e.Worker < 0 || int(e.Worker) >= in.a.Workers {
			continue // an attendee's word is not trusted blindly
		}
		in.evs = append(in.evs, e)
	}
	in.mark = max(in.mark, b.mark)
	if b.sync >= 0 {
		in.syncErr = time.Duration(min(b.sync, int64(time.Second/time.Microsecond))) * time.Microsecond
	}
	if b.end {
		in.ended = true
		in.mark = math.MaxInt64
	}
}

// refuse counts a refused entry, in's (nil: no attendee's), and says so in
// the log the first time for its reason and name.
func (c *collector) refuse(reason string, in *inbox, size int64) {
	name := ""
	if in != nil {
		name = in.a.Name
	}
	c.mu.Lock()
	first := c.refused.add(reason, name)
	c.mu.Unlock()
	if first {
		c.run.Log.EmitAt(event.Event{Kind: event.KindBeat, Worker: event.System, Code: BeatRefused, Msg: firstLine(reason, name, size)})
	}
}

// BeatRefused is the code of the beats that say an entry of the round's
// stream was refused.
const BeatRefused = "refused"

// refusedLines says what the round refused, one line per reason and name.
func (c *collector) refusedLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused.lines()
}

// checkPresence gives up on attendees whose presence lapsed: their lanes
// that have not finished crash there.
func (c *collector) checkPresence(ctx context.Context) {
	rc := c.h.client()
	var left []string
	for name, in := range c.from {
		if in.ended {
			continue
		}
		n, err := rc.Exists(ctx, c.h.room.Key("seen:"+name)).Result()
		if err != nil || (n > 0 && time.Since(in.heard) < 2*presentTTL) {
			continue
		}
		left = append(left, name)
	}
	if len(left) == 0 {
		return
	}
	// A joiner sends its last events before it leaves: whatever is still
	// in the stream behind what was read so far comes first.
	for {
		n, err := c.read(ctx, 0)
		if err != nil || n == 0 {
			break
		}
	}
	for _, name := range left {
		in := c.from[name]
		if in.ended {
			continue // its last batch was in the stream: it finished, then left
		}
		c.release(false) // what it sent before it left goes first
		at := max(in.mark, c.r.Start)
		in.ended, in.mark = true, math.MaxInt64
		c.h.setGone(name)
		for w, d := range in.done {
			if !d {
				in.evs = append(in.evs, event.Event{Kind: event.KindCrash, Worker: int32(w),
					T: time.Duration(at) * time.Microsecond, Msg: name + " disconnected"})
			}
		}
	}
}

// release appends every queued event up to the lowest watermark (all of
// them when flush), merged by time; a lock taken from another attendee
// waits for its release (see handovers).
func (c *collector) release(flush bool) {
	upTo := time.Duration(math.MaxInt64)
	if !flush {
		for _, in := range c.from {
			if in.mark != math.MaxInt64 {
				upTo = min(upTo, in.at(time.Duration(in.mark)*time.Microsecond))
			}
		}
	}
	for {
		var next, waiting *inbox
		for _, in := range c.from {
			if len(in.evs) == 0 || in.at(in.evs[0].T) > upTo {
				continue
			}
			if c.locks.waits(in, &in.evs[0]) {
				if waiting == nil || in.at(in.evs[0].T) < waiting.at(waiting.evs[0].T) {
					waiting = in
				}
				continue
			}
			if next == nil || in.at(in.evs[0].T) < next.at(next.evs[0].T) ||
				in.at(in.evs[0].T) == next.at(next.evs[0].T) && in.a.First < next.a.First {
				next = in
			}
		}
		if next == nil && flush {
			next = waiting // the end: nothing else can come first
		}
		if next == nil {
			return
		}
		e := next.evs[0]
		next.evs = next.evs[1:]
		c.append(next, e)
	}
}

// append adds one remote event to the host's log: its lane renumbered, its
// times moved from the server's clock onto the host's.
func (c *collector) append(in *inbox, e event.Event) {
	if e.Kind == event.KindDone {
		in.done[e.Worker] = true
	}
	e.Worker += int32(in.a.First)
	if e.Has&event.HasPeer != 0 && e.Peer >= 0 && int(e.Peer) < in.a.Workers {
		e.Peer += int32(in.a.First)
	}
	switch {
	case e.Kind == event.KindAcquired && e.Token != "":
		if c.tokens == nil {
			c.tokens = map[string]int32{}
		}
		c.tokens[e.Token] = e.Worker
	case e.Kind == event.KindWait && e.Has&event.HasPeer == 0 && e.Token != "":
		if w, ok := c.tokens[e.Token]; ok {
			e = e.WithPeer(w)
			e.Token = ""
		}
	}
	c.locks.fold(in, e.Worker, &e)
	e.T = c.onHost(in.at(e.T))
	if e.Has&event.HasCall != 0 {
		e.Call = c.onHost(in.at(e.Call))
	}
	c.run.Log.EmitAt(e)
}

func (c *collector) onHost(server time.Duration) time.Duration {
	return max(server-time.Duration(c.r.Start)*time.Microsecond, 0) // the host's clock reads zero at the start
}
