package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// On a real server a run's keys must not outlive a run that was killed
// (kill -9, a crash, a closed laptop). Two things see to it:
//
//   - A safety net: every key of the run gets a TTL of NetTTL that the run
//     renews while it is alive, so a dead run's keys vanish by themselves.
//     A key is netted the first time the run touches it, except a key
//     taken by SETNX or SET … NX without an expiry: a lock's own TTL (or
//     its absence: naive-flaws shows a lock with none, PTTL -1) is the
//     lesson, so such a key is netted only once it has had no TTL for
//     NetGrace, always with PEXPIRE … NX, which never replaces a TTL the
//     run set in between. NetTTL is ten minutes: scenarios act within
//     milliseconds to seconds, so no run sees a netted key expire.
//   - An owner record and its heartbeat (see Owner), which the run renews
//     on every sweep; locklab clean deletes the keys of namespaces whose
//     registered owners are all dead, and nothing else.
//
// A lock key whose lack of a TTL is the lesson is netted as soon as the
// run has read its TTL (the lesson told), else after NetGrace.
//
// A guest (a process taking part in another's race) nets what it writes
// and registers itself too, but deletes only its own registration.
//
// The embedded store dies with the process and needs neither.

// The safety net's and the heartbeat's timing.
const (
	NetTTL       = 10 * time.Minute
	NetGrace     = time.Second
	netEvery     = 250 * time.Millisecond
	HeartbeatTTL = 10 * time.Second
	// discoverEvery sweeps, one SCAN for keys made by scripts.
	discoverEvery = 20
)

// renewIfOurs extends a key's TTL only if it is still the net the run set
// (not one a scenario set since, which is shorter).
var renewIfOurs = redis.NewScript(`
local t = redis.call('PTTL', KEYS[1])
if t > tonumber(ARGV[1]) then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// keyState is what the net knows of one key of the run.
type keyState struct {
	lock     bool      // taken by SETNX / SET NX without an expiry
	read     bool      // the run has read its TTL: a lesson about it is told
	noTTL    time.Time // first seen without a TTL (lock keys)
	nettedAt time.Time // when the net was set or renewed; zero: not netted
	// itsOwn: a sweep read a TTL the net did not set. Sweeps leave the key
	// until a write of this run's touches it again: whoever else writes
	// it nets it, and a room of a hundred processes sweeping each other's
	// keys four times a second would keep its Redis busy with nothing
	// else.
	itsOwn bool
}

// safetyNet is one real node's safety net and heartbeat.
type safetyNet struct {
	node   *Node
	prefix string
	marker string // the heartbeat: prefix alive:<owner-id>
	record string // the owner record: prefix owner:<owner-id>
	owner  Owner
	mu     sync.Mutex
	keys   map[string]*keyState
	stop   chan struct{}
	done   chan struct{}
	ttl    time.Duration
	grace  time.Duration
	sweeps int
}

func newNet(n *Node, prefix string, o Owner) *safetyNet {
	return &safetyNet{node: n, prefix: prefix, owner: o, marker: prefix + MarkerName + ":" + o.ID,
		record: prefix + OwnerName + ":" + o.ID, keys: map[string]*keyState{},
		stop: make(chan struct{}), done: make(chan struct{}), ttl: NetTTL, grace: NetGrace}
}

// beat writes the owner record and the heartbeat, in one round trip.
func (t *safetyNet) beat(ctx context.Context) error {
	_, err := t.node.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, t.record, t.owner.String(), OwnerTTL)
		p.Set(ctx, t.marker, t.owner.String(), HeartbeatTTL)
		return nil
	})
	return err
}

// registration reports whether key is an owner's record or heartbeat in
// the namespace (this owner's or another's): never netted, never swept.
func (t *safetyNet) registration(key string) bool {
	rest := strings.TrimPrefix(key, t.prefix)
	return strings.HasPrefix(rest, MarkerName+":") || strings.HasPrefix(rest, OwnerName+":")
}

// start registers the owner and starts the heartbeat and sweep.
func (t *safetyNet) start(ctx context.Context) error {
	if err := t.beat(ctx); err != nil {
		return err
	}
	go t.loop()
	return nil
}

func (t *safetyNet) loop() {
	defer close(t.done)
	tick := time.NewTicker(netEvery)
	defer tick.Stop()
	life, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { // a sweep stuck on a frozen server ends with the run
		<-t.stop
		stop()
	}()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(life, time.Second)
			t.sweep(ctx)
			cancel()
		}
	}
}

// close stops the sweep; the marker goes with the run's keys.
func (t *safetyNet) close() {
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	<-t.done
}

// sweep renews the heartbeat, nets lock keys that have had no TTL for the
// grace and renews the net of keys whose net is half gone.
func (t *safetyNet) sweep(ctx context.Context) {
	c := t.node.Client
	_ = t.beat(ctx)
	if t.sweeps++; t.sweeps%discoverEvery == 0 {
		t.discover(ctx)
	}
	t.mu.Lock()
	names := make([]string, 0, len(t.keys))
	for k, st := range t.keys {
		if !st.itsOwn {
			names = append(names, k)
		}
	}
	t.mu.Unlock()
	if len(names) == 0 {
		return
	}
	pipe := c.Pipeline()
	ttls := make([]*redis.DurationCmd, len(names))
	for i, k := range names {
		ttls[i] = pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return
	}
	now := time.Now()
	for i, k := range names {
		d, err := ttls[i].Result()
		if err != nil {
			continue
		}
		t.mu.Lock()
		st := t.keys[k]
		noTTL, nettedAt, read := st.noTTL, st.nettedAt, st.read
		t.mu.Unlock()
		seen := nettedAt
		switch { // on copies: a write's net (noteNets) may land meanwhile
		case d == -1: // no TTL
			nettedAt = time.Time{}
			if noTTL.IsZero() {
				noTTL = now
			}
			if read || now.Sub(noTTL) >= t.grace {
				if ok, _ := pexpireNX(ctx, k, t.ttl, c).Result(); ok {
					nettedAt, noTTL = now, time.Time{}
				}
			}
		case d < 0: // gone
			noTTL, nettedAt = time.Time{}, time.Time{}
		default:
			noTTL = time.Time{}
			if !nettedAt.IsZero() && now.Sub(nettedAt) >= t.ttl/2 {
				floor := t.ttl - now.Sub(nettedAt) - time.Minute
				n, err := renewIfOurs.Run(ctx, c, []string{k}, floor.Milliseconds(), t.ttl.Milliseconds()).Int()
				if err == nil && n == 1 {
					nettedAt = now
				} else if err == nil {
					nettedAt = time.Time{} // a TTL of the run's own now
				}
			}
		}
		t.mu.Lock()
		st.noTTL = noTTL
		if d == -2 || !nettedAt.IsZero() {
			st.read = false // told, or gone: a lock taken again is a new lesson
		}
		if st.nettedAt.Equal(seen) { // else a write netted the key since: newer
			st.nettedAt = nettedAt
			st.itsOwn = d > 0 && seen.IsZero() && nettedAt.IsZero()
		}
		t.mu.Unlock()
	}
}

// discover finds the run's keys no command named (a script made them):
// they are netted by the grace rule, as a lock's would be.
func (t *safetyNet) discover(ctx context.Context) {
	iter := t.node.Client.Scan(ctx, 0, t.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		t.mu.Lock()
		if t.keys[k] == nil && !t.registration(k) {
			t.keys[k] = &keyState{lock: true}
		}
		t.mu.Unlock()
	}
}

// known lists the keys of the run the net has seen.
func (t *safetyNet) known() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.keys))
	for k := range t.keys {
		keys = append(keys, k)
	}
	return keys
}

// readOnly are the commands locklab sends that never create a key nor
// drop its TTL; every other command is taken as a write.
var readOnly = map[string]bool{"get": true, "mget": true, "exists": true, "pttl": true, "ttl": true,
	"type": true, "strlen": true, "hget": true, "hgetall": true, "hmget": true, "hlen": true, "lrange": true,
	"llen": true, "scard": true, "smembers": true, "sismember": true, "zrange": true, "zcard": true,
	"zscore": true, "xrange": true, "xlen": true, "dump": true, "scan": true, "ping": true, "time": true,
	"info": true, "pexpire": true, "expire": true, "del": true, "unlink": true, "blpop": true, "brpop": true,
	// WATCH belongs to its connection: sent with a net it would go down
	// another one and watch nothing.
	"watch": true, "unwatch": true}

// toNet notes the run's keys in a command and returns those to net with
// it: the keys of a write that are not a lock's.
func (t *safetyNet) toNet(args []any) []string {
	if len(args) == 0 {
		return nil
	}
	name, _ := args[0].(string)
	lock := takesLock(args)
	// A write that sets the key's TTL itself needs no net: a lock's SET NX
	// PX is one, and a PEXPIRE beside it would double the server's work.
	write := !readOnly[strings.ToLower(name)] && !setsTTL(args)
	ttlRead := strings.EqualFold(name, "pttl") || strings.EqualFold(name, "ttl")
	var keys []string
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range args[1:] {
		k, ok := a.(string)
		if !ok || !strings.HasPrefix(k, t.prefix) || t.registration(k) {
			continue
		}
		st := t.keys[k]
		if st == nil {
			st = &keyState{lock: lock}
			t.keys[k] = st
		} else if lock {
			st.lock, st.read = true, false
		}
		if ttlRead {
			st.read = true
		}
		if write || lock {
			st.itsOwn = false // it may have lost its TTL
		}
		if write && !st.lock {
			keys = append(keys, k)
		}
	}
	return keys
}

// setsTTL reports whether a command gives its key a TTL by itself: SETEX,
// PSETEX, or SET … EX/PX/EXAT/PXAT.
func setsTTL(args []any) bool {
	name, _ := args[0].(string)
	switch strings.ToLower(name) {
	case "setex", "psetex":
		return true
	case "set":
		for _, a := range args[min(3, len(args)):] {
			s, _ := a.(string)
			switch strings.ToLower(s) {
			case "ex", "px", "exat", "pxat":
				return true
			}
		}
	}
	return false
}

// takesLock reports whether a command may create a key whose missing TTL
// is the point: SETNX, or SET … NX without EX/PX/EXAT/PXAT/KEEPTTL.
func takesLock(args []any) bool {
	name, _ := args[0].(string)
	switch strings.ToLower(name) {
	case "setnx", "msetnx":
		return true
	case "set":
		nx, ttl := false, false
		for _, a := range args[min(3, len(args)):] {
			s, _ := a.(string)
			switch strings.ToLower(s) {
			case "nx":
				nx = true
			case "ex", "px", "exat", "pxat", "keepttl":
				ttl = true
			}
		}
		return nx && !ttl
	}
	return false
}

// netHook sends PEXPIRE key NetTTL NX after every write to a key of the
// run that is not a lock's, in the same round trip: a SET that dropped the
// TTL gets it back at once, and a worker's race is not slowed.
type netHook struct{ t *safetyNet }

func (h netHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h netHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		keys := h.t.toNet(cmd.Args())
		if len(keys) == 0 {
			return next(ctx, cmd)
		}
		nets := make([]*redis.BoolCmd, len(keys))
		_, _ = h.t.node.Client.Pipelined(context.WithValue(ctx, netted{}, true), func(p redis.Pipeliner) error {
			_ = p.Process(ctx, cmd)
			for i, k := range keys {
				nets[i] = pexpireNX(ctx, k, h.t.ttl, p)
			}
			return nil
		})
		h.t.noteNets(keys, nets)
		return cmd.Err()
	}
}

func (h netHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(netted{}) != nil {
			return next(ctx, cmds)
		}
		var keys []string
		for _, c := range cmds {
			keys = append(keys, h.t.toNet(c.Args())...)
		}
		if len(keys) == 0 {
			return next(ctx, cmds)
		}
		nets := make([]redis.Cmder, len(keys))
		bools := make([]*redis.BoolCmd, len(keys))
		for i, k := range keys {
			bools[i] = redis.NewBoolCmd(ctx, "pexpire", k, h.t.ttl.Milliseconds(), "nx")
			nets[i] = bools[i]
		}
		// A transaction (MULTI … EXEC) takes its nets inside, before EXEC:
		// after it they would be read as part of EXEC's reply.
		at := len(cmds)
		if at >= 2 && cmds[0].Name() == "multi" && cmds[at-1].Name() == "exec" {
			at--
		}
		all := slices.Concat(cmds[:at], nets, cmds[at:])
		err := next(ctx, all)
		h.t.noteNets(keys, bools)
		for _, c := range cmds {
			if c.Err() != nil {
				return c.Err()
			}
		}
		if err != nil && ctx.Err() != nil {
			return err
		}
		return nil
	}
}

// netted marks a pipeline that already carries its nets.
type netted struct{}

// pexpireNX sends PEXPIRE key ttl NX (Redis 7): a TTL only where none is.
func pexpireNX(ctx context.Context, key string, ttl time.Duration, p interface {
	Process(context.Context, redis.Cmder) error
}) *redis.BoolCmd {
	c := redis.NewBoolCmd(ctx, "pexpire", key, ttl.Milliseconds(), "nx")
	_ = p.Process(ctx, c)
	return c
}

// netted notes when the net was set on keys.
func (t *safetyNet) noteNets(keys []string, nets []*redis.BoolCmd) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, k := range keys {
		if ok, err := nets[i].Result(); err == nil && ok {
			t.keys[k].nettedAt = now
		}
	}
}

// Netted reports whether ctx is the safety net's own pipeline: its PEXPIRE
// … NX commands travel with the run's, and are the run's, not the lock's.
func Netted(ctx context.Context) bool { return ctx.Value(netted{}) != nil }
