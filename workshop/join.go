package workshop

import (
	"context"
	"crypto/ecdh"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// JoinConfig says who joins which room with how many workers.
type JoinConfig struct {
	URL     string
	Room    string
	Name    string
	Workers int
	Tool    string
	Skew    time.Duration // this machine's clock is off by this much (for tests and demos)
	Miss    time.Duration // the clock sync misses by this much, unknown to its error bound (for tests and demos)
	Rounds  int           // leave after this many rounds; 0: stay until ctx ends
	Out     io.Writer     // one line per happening
	// Fire, if set, holds the workers of each round until it receives (a
	// participant's key) or FireWait has passed since the round's start;
	// meanwhile the host is told that nothing earlier is to come.
	Fire     <-chan struct{}
	FireWait time.Duration // default DefaultFireWait
	// Rename, if set, takes requests for a new name; each is answered
	// between rounds (a request during a round waits for its end).
	Rename <-chan RenameRequest
	// Poll is how often the joiner looks for a new round (default 100ms).
	Poll time.Duration
	// Watch, if set, looks at the room for this joiner and the others of
	// this process that share it (Poll is then the watch's), and measures
	// the server's clock for them all unless Skew or Miss is set.
	Watch *Watch
}

// DefaultFireWait is how long a round waits for a participant to fire
// before their workers go by themselves.
const DefaultFireWait = 10 * time.Second

// Join takes part in the room's rounds until ctx ends (or cfg.Rounds are
// done): it runs cfg.Workers workers in each round the host opens. The end
// of ctx (the attendee's Ctrl-C) is leaving, not a failure: it says so and
// returns nil, whatever step it interrupted.
func Join(ctx context.Context, cfg JoinConfig) error {
	if cfg.Room == "" {
		cfg.Room = DefaultRoom
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	err := join(ctx, &cfg)
	if ctx.Err() != nil {
		var taken *NameTakenError
		if errors.As(err, &taken) {
			return err
		}
		fmt.Fprintf(cfg.Out, "%s left the room %q\n", cfg.Name, cfg.Room)
		return nil
	}
	return err
}

func join(ctx context.Context, cfg *JoinConfig) error {
	room, err := openRoom(ctx, cfg)
	if err != nil {
		return err
	}
	if cfg.Watch == nil {
		defer room.Close()
	}
	rc := room.Client()
	key, err := newKey()
	if err != nil {
		return err
	}
	// The presence key carries the public key the host derives this
	// attendee's batch keys from (see auth.go).
	p := &presence{rc: rc, room: room, token: keyText(key), workers: cfg.Workers}
	ok, err := p.claim(ctx, cfg.Name)
	if err != nil {
		return err
	}
	if !ok {
		return &NameTakenError{Name: cfg.Name, Room: cfg.Room}
	}
	defer p.leave()
	pctx, stopPresence := context.WithCancel(ctx)
	defer stopPresence()
	go p.renew(pctx)
	j := &joiner{cfg: cfg, room: room, key: key, p: p, clk: ServerClock{Skew: cfg.Skew, Miss: cfg.Miss}}
	if err := j.sync(ctx, rc, ""); err != nil {
		return err
	}
	return j.loop(ctx)
}

// NameTakenError: someone in the room has the name already.
type NameTakenError struct{ Name, Room string }

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("the name %q is taken in room %q: choose another --name", e.Name, e.Room)
}

// markEvery is how often a joiner that waits to be fired tells the host
// that nothing earlier is to come: at the pace the host reads the stream,
// not at the pace of events, so a room of a hundred waiting does not fill
// the stream with watermarks.
const markEvery = readBlock

// unanswered is how long a joiner keeps asking a Redis that does not
// answer (a busy machine, a network's hiccup) before it leaves.
const unanswered = 30 * time.Second

type joiner struct {
	cfg  *JoinConfig
	p    *presence
	room *store.Store
	key  *ecdh.PrivateKey
	clk  ServerClock
}

func (j *joiner) loop(ctx context.Context) error {
	last, rounds, said := "", 0, ""
	poll := j.cfg.Poll
	if poll <= 0 {
		poll = pollEvery
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var failing time.Time // since when the room's Redis does not answer
	var seen int64        // the watch's last look read
	for {
		r, state, hosted, n, next, err := j.look(ctx, seen)
		seen = n
		tick := t.C
		if next != nil {
			tick = nil // the watch's next look, not the ticker, is the pace
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil && failing.IsZero():
			failing = time.Now()
			fmt.Fprintf(j.cfg.Out, "the room's Redis does not answer (%v): trying again for %v\n", err, unanswered)
		case err != nil && time.Since(failing) > unanswered:
			return err
		case err == nil && !failing.IsZero():
			failing, said = time.Time{}, ""
			fmt.Fprintln(j.cfg.Out, "the room's Redis answers again")
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
			case <-next:
			}
			continue
		}
		switch {
		case !hosted && said != "nohost":
			said = "nohost"
			fmt.Fprintf(j.cfg.Out, "waiting for a host in room %q (locklab host --redis URL)\n", j.cfg.Room)
		case hosted && (r == nil || r.id() == last) && said != "lobby":
			said = "lobby"
			fmt.Fprintf(j.cfg.Out, "%s is in room %q with %d worker(s): waiting for the host to open a round\n", j.cfg.Name, j.cfg.Room, j.cfg.Workers)
		}
		if r != nil && r.id() != last && state == "racing" {
			if j.clk.Until(r.Start) < 0 {
				last = r.id() // it began before we saw it: wait for the next
				fmt.Fprintf(j.cfg.Out, "round %d began before this machine saw it: %s races in the next one\n", r.N, j.cfg.Name)
			} else if a, in := j.seat(r); in && a.Key != keyText(j.key) {
				last = r.id()
				fmt.Fprintf(j.cfg.Out, "round %d: the host read another key under the name %s — someone wrote over this machine's presence in the Redis; its batches would be refused, so it sits this round out\n", r.N, a.Name)
			} else if in {
				last, said = r.id(), ""
				if err := j.race(ctx, r, a); err != nil {
					return err
				}
				rounds++
				if j.cfg.Rounds > 0 && rounds >= j.cfg.Rounds {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case req := <-j.cfg.Rename:
			req.Reply <- j.rename(ctx, req.Name)
		case <-tick:
		case <-next:
		}
	}
}

// seat is this joiner's place in round r: under its name, or under the
// name it had when the round opened (it renamed itself since).
func (j *joiner) seat(r *Round) (Attendee, bool) {
	if a, in := r.attendee(j.cfg.Name); in {
		return a, true
	}
	for _, a := range r.Attendees {
		if a.Key == keyText(j.key) {
			return a, true
		}
	}
	return Attendee{}, false
}

// race runs this machine's workers in round r and streams their events.
func (j *joiner) race(ctx context.Context, r *Round, a Attendee) error {
	st, err := store.Open(ctx, store.Config{URLs: []string{j.cfg.URL}, RunID: r.RunID(j.cfg.Room), Guest: true,
		PoolSize: min(max(a.Workers, 4), 64)})
	if err != nil {
		return err
	}
	defer st.Close()
	rc := st.Client()
	if err := j.sync(ctx, rc, r.ID); err != nil {
		return err
	}
	wait := j.clk.Until(r.Start)
	fmt.Fprintf(j.cfg.Out, "round %d: %s with %s, %d worker(s) as %s/1…%s/%d, starting in %v\n", r.N, r.Scenario, r.Strategy,
		a.Workers, a.Name, a.Name, a.Workers, wait.Round(time.Millisecond))
	if wait > 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	mac, err := batchKey(j.key, r.HostKey, r.ID, a.Name)
	if err != nil {
		return fmt.Errorf("round %d: the host's key is not one: %w", r.N, err)
	}
	f := &forwarder{rc: rc, stream: st.Key("events"), round: r.ID, mac: mac, name: a.Name, syncErr: j.clk.Err}
	if j.cfg.Fire != nil {
		if err := j.awaitFire(ctx, r, a, f); err != nil || ctx.Err() != nil {
			return err
		}
	}
	p := r.Params
	p.Workers = a.Workers
	cfg := scenario.Config{Scenario: r.Scenario, Strategy: r.Strategy, Params: p, Seed: r.Seed + uint64(a.First)*7919, Tool: j.cfg.Tool}
	run, err := scenario.StartGuest(ctx, st, cfg, a.First, r.Params.Workers)
	if err != nil {
		return err
	}
	s0, c0 := j.clk.Now(), st.Clock().Now()
	f.log = run.Log
	f.toServer = func(t time.Duration) time.Duration { return time.Duration(s0)*time.Microsecond + t - c0 }
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-run.Done():
			running = false
		case <-tick.C:
		}
		if err := f.flush(ctx, !running); err != nil {
			run.Stop()
			run.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sending events to the host: %w", err)
		}
	}
	if err := run.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		var se *scenario.ServerError
		if !errors.As(err, &se) {
			return err
		}
	}
	did, denied := 0, 0
	for _, s := range scenario.Scores(run.Header, run.Log.Events()) {
		did, denied = did+s.Did, denied+s.Denials
	}
	fmt.Fprintf(j.cfg.Out, "round %d: %s's %d worker(s): %s %d, denied %d time(s); the host's screen has everyone's verdict\n",
		r.N, a.Name, a.Workers, scenario.ScoreTerm(r.Scenario), did, denied)
	return nil
}

// forwarder sends a log's new events to the stream, in signed batches of
// at most MaxEntryBytes.
type forwarder struct {
	rc       store.Redis
	stream   string
	round    string // the round's ID
	mac      []byte // this attendee's batch key this round
	name     string
	log      *event.Log
	toServer func(time.Duration) time.Duration
	syncErr  time.Duration // how far the stamps may be off the server's clock
	cursor   int
	n        int64 // batches sent
	sent     time.Time
	buf      []event.Event
	b        []byte
}

// batchRoom is how much of an entry a batch's events may fill: the rest is
// for its other fields.
const batchRoom = MaxEntryBytes - 1024

// maxField bounds an event's text (a server's error message may be long),
// so that any one event fits in a batch.
const maxField = 2048

func (f *forwarder) flush(ctx context.Context, end bool) error {
	mark := f.log.Mark()
	f.buf, f.cursor = f.log.Read(f.cursor, f.buf[:0])
	if len(f.buf) == 0 && !end && time.Since(f.sent) < readBlock {
		return nil // nothing new: the watermark alone goes a little less often
	}
	f.sent = time.Now()
	f.b = f.b[:0]
	for i := range f.buf {
		e := &f.buf[i]
		e.T = f.toServer(e.T)
		if e.Has&event.HasCall != 0 {
			e.Call = f.toServer(e.Call)
		}
		e.Res, e.Token, e.Code, e.Msg = cut(e.Res), cut(e.Token), cut(e.Code), cut(e.Msg)
		n := len(f.b)
		f.b = append(event.AppendJSON(f.b, e), '\n')
		if len(f.b) > batchRoom {
			// The events so far go now, with no watermark: the rest of
			// this flush is still to come.
			if err := f.send(ctx, f.b[:n], 0, false); err != nil {
				return err
			}
			f.b = append(f.b[:0], f.b[n:]...)
		}
	}
	return f.send(ctx, f.b, f.toServer(mark).Microseconds(), end)
}

// send adds one signed batch to the stream.
func (f *forwarder) send(ctx context.Context, body []byte, mark int64, end bool) error {
	f.n++
	b := batch{round: f.round, name: f.name, n: f.n, mark: mark, sync: f.syncErr.Microseconds(), end: end, body: body}
	return f.rc.XAdd(ctx, &redis.XAddArgs{Stream: f.stream, MaxLen: streamMaxLen, Approx: true, Values: b.values(b.sign(f.mac))}).Err()
}

// cut shortens s to at most maxField bytes, on a character's boundary.
func cut(s string) string {
	if len(s) <= maxField {
		return s
	}
	i := maxField
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// awaitFire holds round r's workers until the participant fires or the
// wait is over, sending the host a watermark (nothing earlier is to come)
// at the stream's pace, so that everyone else's events are not held up.
func (j *joiner) awaitFire(ctx context.Context, r *Round, a Attendee, f *forwarder) error {
	wait := j.cfg.FireWait
	if wait <= 0 {
		wait = DefaultFireWait
	}
	fmt.Fprintf(j.cfg.Out, "round %d: fire your %d worker(s) now (they go by themselves in %v)\n", r.N, a.Workers, wait)
drain: // a key pressed before the round does not fire it
	for {
		select {
		case <-j.cfg.Fire:
		default:
			break drain
		}
	}
	deadline := time.After(wait)
	tick := time.NewTicker(markEvery)
	defer tick.Stop()
	for {
		if err := f.send(ctx, nil, j.clk.Now(), false); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sending events to the host: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-j.cfg.Fire:
			fmt.Fprintf(j.cfg.Out, "round %d: %s fired %d worker(s)\n", r.N, a.Name, a.Workers)
			return nil
		case <-deadline:
			fmt.Fprintf(j.cfg.Out, "round %d: %s's %d worker(s) went by themselves\n", r.N, a.Name, a.Workers)
			return nil
		case <-tick.C:
		}
	}
}
