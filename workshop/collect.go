package workshop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
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
	last   string        // the stream's last entry taken
	ready  chan struct{} // run is set
	// tokens names the holder of each lock token appended so far, so a
	// wait on a lock another machine holds names its holder.
	tokens map[string]int32
	locks  handovers
}

// inbox is one attendee's events not yet appended.
type inbox struct {
	a     Attendee
	evs   []scenario.Event // T: server µs
	mark  int64            // server µs: nothing earlier is still to come
	ended bool             // sent its last event, or gone
	done  []bool           // by worker: its outcome is in
	heard time.Time
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
		c.from[a.Name] = &inbox{a: a, done: make([]bool, a.Workers), heard: time.Now().Add(c.h.cfg.Lead)}
	}
	c.last = "0-0"
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
// (0: not at all), and says how many it took.
func (c *collector) read(ctx context.Context, block time.Duration) (int, error) {
	args := &redis.XReadArgs{Streams: []string{c.stream, c.last}, Count: 512, Block: block}
	if block == 0 {
		args.Block = -1 // no BLOCK: answer at once
	}
	res, err := c.st.Client().XRead(ctx, args).Result()
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case errors.Is(err, redis.Nil):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("reading the attendees' events: %w", err)
	}
	n := 0
	for _, s := range res {
		for _, m := range s.Messages {
			c.last = m.ID
			c.take(m.Values)
			n++
		}
	}
	return n, nil
}

func (c *collector) finished() bool {
	for _, in := range c.from {
		if !in.ended {
			return false
		}
	}
	return true
}

// take queues one stream entry: a batch of one attendee's events.
func (c *collector) take(v map[string]any) {
	name, _ := v["a"].(string)
	in := c.from[name]
	if in == nil || in.ended {
		return // not of this round, or already given up on
	}
	in.heard = time.Now()
	body, _ := v["e"].(string)
	for _, line := range bytes.Split([]byte(body), []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		e, err := scenario.DecodeEvent(line)
		if err != nil || e.Worker < 0 || int(e.Worker) >= in.a.Workers {
			continue // an attendee's word is not trusted blindly
		}
		in.evs = append(in.evs, e)
	}
	if w, err := strconv.ParseInt(fmt.Sprint(v["w"]), 10, 64); err == nil {
		in.mark = max(in.mark, w)
	}
	if us, err := strconv.ParseInt(fmt.Sprint(v["s"]), 10, 64); err == nil && us >= 0 {
		in.syncErr = time.Duration(min(us, int64(time.Second/time.Microsecond))) * time.Microsecond
	}
	if v["end"] == "1" {
		in.ended = true
		in.mark = math.MaxInt64
	}
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
				in.evs = append(in.evs, scenario.Event{Kind: scenario.KindCrash, Worker: int32(w),
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
func (c *collector) append(in *inbox, e scenario.Event) {
	if e.Kind == scenario.KindDone {
		in.done[e.Worker] = true
	}
	e.Worker += int32(in.a.First)
	if e.Has&scenario.HasPeer != 0 && e.Peer >= 0 && int(e.Peer) < in.a.Workers {
		e.Peer += int32(in.a.First)
	}
	switch {
	case e.Kind == scenario.KindAcquired && e.Token != "":
		if c.tokens == nil {
			c.tokens = map[string]int32{}
		}
		c.tokens[e.Token] = e.Worker
	case e.Kind == scenario.KindWait && e.Has&scenario.HasPeer == 0 && e.Token != "":
		if w, ok := c.tokens[e.Token]; ok {
			e = e.WithPeer(w)
			e.Token = ""
		}
	}
	c.locks.fold(in, e.Worker, &e)
	e.T = c.onHost(in.at(e.T))
	if e.Has&scenario.HasCall != 0 {
		e.Call = c.onHost(in.at(e.Call))
	}
	c.run.Log.EmitAt(e)
}

func (c *collector) onHost(server time.Duration) time.Duration {
	return max(server-time.Duration(c.r.Start)*time.Microsecond, 0) // the host's clock reads zero at the start
}
