package workshop

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/store"
)

// Watch looks at a room for every joiner of one process: a host that
// seats a hundred participants over SSH runs a hundred joiners, and one
// read of the round and of the host's presence each poll serves them all,
// where each would otherwise read the same keys. It also measures the
// server's clock once a round for them all, as they share this machine's
// clock. Everything else stays each joiner's own, as for a join process:
// its name and presence, its key, its workers' connections and batches.
type Watch struct {
	url, room string
	poll      time.Duration
	ctx       context.Context

	once  sync.Once
	mu    sync.Mutex
	cur   look
	next  chan struct{} // closed when a newer look is in cur
	polls atomic.Int64

	roomMu sync.Mutex
	keys   *store.Store // the room's keys, for every joiner; closed with ctx

	clockMu sync.Mutex
	clockOf string // the round the clock was measured for ("" before any)
	clk     ServerClock
	synced  bool
}

// look is what one poll of the room saw.
type look struct {
	n      int64 // which poll; 0 before the first
	round  *Round
	state  string
	hosted bool
	err    error
}

// NewWatch returns the watch of room on the Redis at url, polled every
// poll (pollEvery if 0) from its first joiner on, until ctx ends.
func NewWatch(ctx context.Context, url, room string, poll time.Duration) *Watch {
	if room == "" {
		room = DefaultRoom
	}
	if poll <= 0 {
		poll = pollEvery
	}
	return &Watch{url: url, room: room, poll: poll, ctx: ctx, next: make(chan struct{})}
}

// Polls is how many times the watch has read the room.
func (w *Watch) Polls() int64 { return w.polls.Load() }

// latest is the newest look, and a channel closed once there is a newer
// one; the first call starts the polling.
func (w *Watch) latest() (look, <-chan struct{}) {
	w.once.Do(func() { go w.loop() })
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur, w.next
}

func (w *Watch) publish(l look) {
	w.mu.Lock()
	l.n = w.cur.n + 1
	w.cur = l
	close(w.next)
	w.next = make(chan struct{})
	w.mu.Unlock()
	w.polls.Add(1)
}

// store is the room's store the watch's joiners share, opened by the
// first to ask and closed when the watch's context ends.
func (w *Watch) store() (*store.Store, error) {
	w.roomMu.Lock()
	defer w.roomMu.Unlock()
	if w.keys != nil {
		return w.keys, nil
	}
	room, err := store.Open(w.ctx, store.Config{URLs: []string{w.url}, RunID: roomID(w.room), Guest: true})
	if err != nil {
		return nil, err
	}
	w.keys = room
	go func() {
		<-w.ctx.Done()
		room.Close()
	}()
	return room, nil
}

func (w *Watch) loop() {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		room, err := w.store()
		if err != nil {
			w.publish(look{err: err})
		} else {
			rc := room.Client()
			r, state, err := readRound(w.ctx, rc, room.Key("round"))
			var hosted int64
			if err == nil {
				hosted, err = rc.Exists(w.ctx, room.Key("host")).Result()
			}
			w.publish(look{round: r, state: state, hosted: hosted > 0, err: err})
		}
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// clock is the server's clock as measured from here for round (a
// round's ID; "" on joining): the first joiner to ask measures it, the
// others wait and share it.
func (w *Watch) clock(ctx context.Context, round string, c ServerClock) (ServerClock, error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if w.synced && w.clockOf == round {
		return w.clk, nil
	}
	room, err := w.store()
	if err != nil {
		return c, err
	}
	if err := c.Sync(ctx, room.Client()); err != nil {
		return c, err
	}
	w.clk, w.clockOf, w.synced = c, round, true
	return c, nil
}

// openRoom opens the room's keys: the watch's store, shared with the
// process's other joiners, when the joiner has a watch.
func openRoom(ctx context.Context, cfg *JoinConfig) (*store.Store, error) {
	if cfg.Watch != nil {
		return cfg.Watch.store()
	}
	return store.Open(ctx, store.Config{URLs: []string{cfg.URL}, RunID: roomID(cfg.Room), Guest: true})
}

// sync measures the server's clock for round (its ID; "" on joining):
// through the watch, shared with the process's other joiners, when this
// joiner's clock is the machine's.
func (j *joiner) sync(ctx context.Context, rc store.Redis, round string) error {
	if w := j.cfg.Watch; w != nil && j.cfg.Skew == 0 && j.cfg.Miss == 0 {
		c, err := w.clock(ctx, round, ServerClock{})
		j.clk = c
		return err
	}
	return j.clk.Sync(ctx, rc)
}

// look reads the room: the current round, its state and whether a host
// is there. With a watch it is the watch's newest look, and next is
// closed once there is a newer one; without, next is nil.
func (j *joiner) look(ctx context.Context, seen int64) (r *Round, state string, hosted bool, n int64, next <-chan struct{}, err error) {
	if w := j.cfg.Watch; w != nil {
		l, next := w.latest()
		for l.n == seen { // nothing newer than what this joiner has read
			select {
			case <-ctx.Done():
				return nil, "", false, seen, next, ctx.Err()
			case <-next:
			}
			l, next = w.latest()
		}
		return l.round, l.state, l.hosted, l.n, next, l.err
	}
	rc := j.room.Client()
	r, state, err = readRound(ctx, rc, j.room.Key("round"))
	var h int64
	if err == nil {
		h, err = rc.Exists(ctx, j.room.Key("host")).Result()
	}
	return r, state, h > 0, 0, nil, err
}
