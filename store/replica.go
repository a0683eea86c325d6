package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// replica is an embedded node's asynchronous replica. Like Redis since 7,
// it receives effects, not commands: after each write, the state of every
// key the write touched, read under one mutex so the stream is in the
// primary's order. An effect reaches the replica lag after it happened on
// the primary (in the run's time); a failover loses whatever had not.
type replica struct {
	mini    *miniredis.Miniredis
	lag     time.Duration
	pending []effect
	applied int
}

// effect is one key's state on the primary at one instant.
type effect struct {
	at   time.Duration // virtual time of the write
	key  string
	typ  string // "" when the key is gone
	str  string
	list []string
	ttl  time.Duration // remaining at at; 0: none
}

// Replicate gives an embedded node an asynchronous replica that trails it by
// lag, starting as a copy of the node's keys. Failover promotes it.
func (n *Node) Replicate(lag time.Duration) error {
	if n.topo != nil {
		return n.topo.Replicate(n.Index, lag)
	}
	if !n.embedded {
		return ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	n.attach(lag)
	return nil
}

// attach makes the replica; faultMu is held.
func (n *Node) attach(lag time.Duration) {
	m := miniredis.NewMiniRedis() // not listening until it is promoted
	m.ClockTTL(true)
	n.mu.Lock()
	m.SetTime(n.wall(n.synced))
	n.mu.Unlock()
	r := &replica{mini: m, lag: lag}
	n.replMu.Lock()
	now := n.clock.Now()
	for _, k := range n.mini.Keys() {
		r.apply(n.capture(now, k), now)
	}
	n.repl = r
	n.replicating.Store(true)
	n.replMu.Unlock()
}

// Failover stops the node's primary and promotes its replica in its place,
// on the same address (as Sentinel or a virtual IP makes clients see it).
// The writes the replica had not received yet are lost; lost says how many.
// The old primary rejoins as the new one's replica, after a full resync.
func (n *Node) Failover() (lost int, err error) {
	if n.topo != nil {
		return 0, ErrUnsupported // FailOver says what a spawned one lost
	}
	if !n.embedded {
		return 0, ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	n.replMu.Lock()
	r := n.repl
	n.repl = nil
	n.replicating.Store(false)
	n.replMu.Unlock()
	if r == nil {
		return 0, fmt.Errorf("store: node %d has no replica to fail over to", n.Index)
	}
	n.replicate(r, n.clock.Now())
	lost = len(r.pending)
	if n.rt != nil {
		n.promoteInPlace(r)
		return lost, nil
	}
	addr := n.listening()
	if !n.stopped {
		n.mini.Close()
	}
	if err := listenAgain(r.mini, addr); err != nil {
		return lost, fmt.Errorf("store: promote node %d's replica: %w", n.Index, err)
	}
	n.listened(r.mini)
	n.mu.Lock()
	n.mini = r.mini
	n.synced = -1
	n.mu.Unlock()
	n.stopped = false
	n.sync()
	n.attach(r.lag) // the old primary comes back as the new one's replica
	return lost, nil
}

// record captures the effects of a successful write for the replica.
func (n *Node) record(cmd redis.Cmder) {
	if err := cmd.Err(); err != nil && err != redis.Nil {
		return
	}
	args := cmd.Args()
	name := strings.ToUpper(fmt.Sprint(args[0]))
	n.replMu.Lock()
	defer n.replMu.Unlock()
	if n.repl == nil || n.repl.mini.IsReadOnlyCommand(name) {
		return
	}
	keys := writtenKeys(name, args)
	now := n.clock.Now()
	for _, k := range keys {
		n.repl.pending = append(n.repl.pending, n.capture(now, k))
	}
}

// writtenKeys are the keys a write command names.
func writtenKeys(name string, args []any) []string {
	str := func(a []any) []string {
		ks := make([]string, 0, len(a))
		for _, v := range a {
			ks = append(ks, fmt.Sprint(v))
		}
		return ks
	}
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL":
		if len(args) < 3 {
			return nil
		}
		nk, err := strconv.Atoi(fmt.Sprint(args[2]))
		if err != nil || nk < 0 || 3+nk > len(args) {
			return nil
		}
		return str(args[3 : 3+nk])
	case "DEL", "UNLINK":
		return str(args[1:])
	case "MSET", "MSETNX":
		var ks []string
		for i := 1; i < len(args); i += 2 {
			ks = append(ks, fmt.Sprint(args[i]))
		}
		return ks
	case "FLUSHALL", "FLUSHDB", "SCRIPT", "PING", "HELLO", "CLIENT", "SELECT":
		return nil
	}
	if len(args) < 2 {
		return nil
	}
	return []string{fmt.Sprint(args[1])}
}

// capture reads key k's state on the primary at virtual time now.
func (n *Node) capture(now time.Duration, k string) effect { return captureFrom(n.mini, now, k) }

// captureFrom reads key k's state on m at virtual time now.
func captureFrom(m *miniredis.Miniredis, now time.Duration, k string) effect {
	e := effect{at: now, key: k, typ: m.Type(k)}
	switch e.typ {
	case "string":
		e.str, _ = m.Get(k)
	case "list":
		e.list, _ = m.List(k)
	case "set":
		e.list, _ = m.Members(k)
	case "hash":
		fs, _ := m.HKeys(k)
		for _, f := range fs {
			e.list = append(e.list, f, m.HGet(k, f))
		}
	case "":
	default:
		e.typ = "" // a type the replica does not carry is lost with it
	}
	if e.typ != "" {
		e.ttl = m.TTL(k)
	}
	return e
}

// replicate applies the effects that have reached r by now.
func (n *Node) replicate(r *replica, now time.Duration) {
	i := 0
	for ; i < len(r.pending) && r.pending[i].at+r.lag <= now; i++ {
		r.apply(r.pending[i], now)
	}
	r.applied += i
	r.pending = r.pending[i:]
}

func (r *replica) apply(e effect, now time.Duration) {
	m := r.mini
	m.Del(e.key)
	left := e.ttl - (now - e.at) // the expiry is absolute, as Redis replicates it
	if e.ttl > 0 && left <= 0 {
		return
	}
	switch e.typ {
	case "string":
		m.Set(e.key, e.str)
	case "list":
		m.RPush(e.key, e.list...)
	case "set":
		m.SAdd(e.key, e.list...)
	case "hash":
		m.HSet(e.key, e.list...)
	default:
		return
	}
	if e.ttl > 0 {
		m.SetTTL(e.key, left)
	}
}

// tickReplica moves a node's replica along: its time and its stream.
func (n *Node) tickReplica() {
	n.replMu.Lock()
	defer n.replMu.Unlock()
	if n.repl == nil {
		return
	}
	n.mu.Lock()
	n.repl.mini.SetTime(n.wall(n.synced))
	n.mu.Unlock()
	n.replicate(n.repl, n.clock.Now())
}

// Lagging reports how many writes the node's replica has not received yet
// (−1: no replica).
func (n *Node) Lagging() int {
	n.replMu.Lock()
	defer n.replMu.Unlock()
	if n.repl == nil {
		return -1
	}
	return len(n.repl.pending)
}

// FailOver promotes the node's replica in its primary's place and says
// what was lost: on the embedded store the emulated replica; on a spawned
// topology the primary process is killed and its replica promoted (by
// Sentinel, or REPLICAOF NO ONE).
func (n *Node) FailOver() (string, error) {
	if n.topo != nil {
		return n.topo.Failover(n.Index)
	}
	lost, err := n.Failover()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("node %d's primary failed over to its replica; the %d write(s) it had not received are lost", n.Index, lost), nil
}
