package workshop

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// HostConfig says what the host runs.
type HostConfig struct {
	URL      string
	Room     string
	Scenario string
	Strategy string
	Params   event.Params // Workers is ignored: the attendees bring theirs
	Seed     uint64
	Tool     string
	Lead     time.Duration // how far ahead a round starts (default DefaultLead)
}

// Host hosts a room: it opens rounds and folds everyone's events.
type Host struct {
	cfg   HostConfig
	room  *store.Store
	clk   ServerClock
	token string
	key   *ecdh.PrivateKey // this hosting's (see auth.go)
	stop  chan struct{}
	done  chan struct{}

	lobbyMu sync.Mutex

	mu      sync.Mutex
	n       int
	round   *Round
	run     *scenario.Run
	rstore  *store.Store
	coll    *collector
	gone    map[string]bool   // attendees of the current round who left
	byKey   map[string]string // the last name each attendee's key was listed under
	renames []Rename
}

// OpenHost connects to the room's Redis and takes the room; it fails when
// another host holds it.
func OpenHost(ctx context.Context, cfg HostConfig) (*Host, error) {
	if cfg.Room == "" {
		cfg.Room = DefaultRoom
	}
	if cfg.Lead <= 0 {
		cfg.Lead = DefaultLead
	}
	if err := scenario.Joinable(cfg.Scenario, cfg.Strategy); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, store.Config{URLs: []string{cfg.URL}, RunID: roomID(cfg.Room)})
	if err != nil {
		return nil, err
	}
	key, err := newKey()
	if err != nil {
		st.Close()
		return nil, err
	}
	h := &Host{cfg: cfg, room: st, key: key, token: strconv.FormatInt(time.Now().UnixNano(), 36), stop: make(chan struct{}), done: make(chan struct{})}
	rc := st.Client()
	ok, err := rc.SetNX(ctx, st.Key("host"), h.token, hostTTL).Result()
	if err != nil {
		st.Close()
		return nil, err
	}
	if !ok {
		st.Close()
		return nil, fmt.Errorf("room %q on this Redis already has a host: choose another --room", cfg.Room)
	}
	if err := h.clk.Sync(ctx, rc); err != nil {
		st.Close()
		return nil, err
	}
	rc.Del(ctx, st.Key("round"))
	go h.heartbeat()
	return h, nil
}

func (h *Host) heartbeat() {
	defer close(h.done)
	t := time.NewTicker(hostTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			h.room.Client().Set(ctx, h.room.Key("host"), h.token, hostTTL)
			cancel()
		}
	}
}

// Room is the room's name.
func (h *Host) Room() string { return h.cfg.Room }

// Config is what the host runs.
func (h *Host) Config() HostConfig { return h.cfg }

// Lobby lists the attendees who are here now, by name, each with the
// public key its presence carries. A name no joiner could have (whoever
// can write to the Redis can write one) is not listed.
func (h *Host) Lobby(ctx context.Context) ([]Attendee, error) {
	h.lobbyMu.Lock() // one reading at a time: a rename is seen in the order it happened
	defer h.lobbyMu.Unlock()
	rc := h.room.Client()
	all, err := rc.HGetAll(ctx, h.room.Key("lobby")).Result()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for name := range all {
		if nameRE.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	// One round trip for everyone's presence: a room of a hundred is
	// read as fast as a room of one.
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = h.room.Key("seen:" + n)
	}
	seen, err := rc.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	var out []Attendee
	var left []string
	for i, name := range names {
		key, ok := seen[i].(string)
		if !ok {
			left = append(left, name)
			continue
		}
		if _, err := parseKey(key); err != nil {
			continue // not a joiner of this locklab's: it could not sign
		}
		var workers int
		fmt.Sscan(all[name], &workers)
		out = append(out, Attendee{Name: name, Workers: min(max(workers, 1), MaxWorkers), Key: key})
	}
	if len(left) > 0 {
		rc.HDel(ctx, h.room.Key("lobby"), left...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > MaxAttendees {
		out = out[:MaxAttendees]
	}
	h.noteNames(out)
	return out, nil
}

// noteNames records the attendees listed under another name than before:
// one presence key is one joiner, whatever it is called.
func (h *Host) noteNames(lobby []Attendee) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey == nil {
		h.byKey = map[string]string{}
	}
	for _, a := range lobby {
		if was, ok := h.byKey[a.Key]; ok && was != a.Name {
			h.renames = append(h.renames, Rename{From: was, To: a.Name, Before: h.n + 1})
		}
		h.byKey[a.Key] = a.Name
	}
}

// Renames are the name changes seen so far, in order.
func (h *Host) Renames() []Rename {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.renames)
}

// ErrEmpty: a round needs at least one attendee.
var ErrEmpty = errors.New("nobody has joined yet: attendees run locklab join --redis URL --name NAME")

// Open ends the current round (its keys are deleted), then opens the next
// for everyone in the lobby and starts its run; the workers everywhere
// start at the same instant, a short lead from now.
func (h *Host) Open(ctx context.Context) (*scenario.Run, *Round, error) {
	lobby, err := h.Lobby(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(lobby) == 0 {
		return nil, nil, ErrEmpty
	}
	h.endRound()
	id, err := newRoundID()
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	h.n++
	r := &Round{Host: h.token, N: h.n, ID: id, HostKey: keyText(h.key), Scenario: h.cfg.Scenario, Strategy: h.cfg.Strategy,
		Params: h.cfg.Params, Seed: h.cfg.Seed}
	h.mu.Unlock()
	first := 0
	for _, a := range lobby {
		a.First = first
		first += a.Workers
		r.Attendees = append(r.Attendees, a)
	}
	if first > event.MaxWorkers {
		return nil, nil, fmt.Errorf("%d workers in all: at most %d fit one round; ask attendees for fewer --workers", first, event.MaxWorkers)
	}
	r.Params.Workers = first
	if err := h.clk.Sync(ctx, h.room.Client()); err != nil {
		return nil, nil, err
	}
	r.Start = h.clk.Now() + h.cfg.Lead.Microseconds()
	// The round's clock reads zero at its start, here as on the server.
	origin := time.Now().Add(h.clk.Until(r.Start))
	rs, err := store.Open(ctx, store.Config{URLs: []string{h.cfg.URL}, RunID: r.RunID(h.cfg.Room), PoolSize: 16, Origin: origin})
	if err != nil {
		return nil, nil, err
	}
	// Every batch of this round is added after the round is published,
	// so after this instant of the server's clock: the stream's IDs are
	// its milliseconds, and whatever is in the stream before is ignored.
	opened, err := h.room.Client().Time(ctx).Result()
	if err != nil {
		rs.Close()
		return nil, nil, err
	}
	c := &collector{h: h, r: r, st: rs, stream: rs.Key("events"), ready: make(chan struct{}),
		last: strconv.FormatInt(opened.UnixMilli(), 10) + "-0"}
	cfg := scenario.Config{Scenario: r.Scenario, Strategy: r.Strategy, Params: r.Params, Seed: r.Seed, Tool: h.cfg.Tool}
	run, err := scenario.StartHosted(context.Background(), rs, cfg, r.Lanes(), c.collect)
	if err != nil {
		rs.Close()
		return nil, nil, err
	}
	c.run = run
	close(c.ready)
	spec, _ := json.Marshal(r)
	if err := h.room.Client().HSet(ctx, h.room.Key("round"), "spec", spec, "state", "racing").Err(); err != nil {
		run.Stop()
		run.Wait()
		rs.Close()
		return nil, nil, err
	}
	h.mu.Lock()
	h.round, h.run, h.rstore, h.coll, h.gone = r, run, rs, c, map[string]bool{}
	h.mu.Unlock()
	return run, r, nil
}

// Refused says what the current round refused from its stream: entries
// too big to read, of another round, in the name of nobody in it, or in
// an attendee's name but not signed with its key (forged) or copies of
// its batches (replayed); one line per reason and name.
func (h *Host) Refused() []string {
	h.mu.Lock()
	c := h.coll
	h.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.refusedLines()
}

// Gone lists the attendees of the current round who left during it.
func (h *Host) Gone() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for n := range h.gone {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (h *Host) setGone(name string) {
	h.mu.Lock()
	h.gone[name] = true
	h.mu.Unlock()
}

// endRound stops the current round and deletes its keys.
func (h *Host) endRound() {
	h.mu.Lock()
	run, rs := h.run, h.rstore
	h.run, h.rstore = nil, nil
	h.mu.Unlock()
	if run != nil {
		run.Stop()
		run.Wait()
	}
	if rs != nil {
		rs.Close()
	}
}

// Close ends the round and leaves the room, deleting its keys.
func (h *Host) Close() {
	h.endRound()
	close(h.stop)
	<-h.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rc := h.room.Client()
	rc.Del(ctx, h.room.Key("round"), h.room.Key("host"))
	h.room.Close()
}

// client is the room's Redis client.
func (h *Host) client() store.Redis { return h.room.Client() }
