// Package trait describes what a lock strategy's lock is: how it ends when
// its holder stops releasing it, what token it hands out, what renews it,
// where it lives and on how many nodes. The registry declares each
// strategy's traits, the event log's header records them, and the views,
// summaries and models read them instead of the strategy's name.
package trait

import "time"

// Server names the kind of server a strategy runs on.
type Server string

// Expiry is how a held lock ends without a release.
type Expiry string

// The expiries.
const (
	// ExpiryNone: nothing is held, or what is held never ends by itself.
	ExpiryNone Expiry = "none"
	// ExpiryTTL: the server deletes the lock when its TTL runs out.
	ExpiryTTL Expiry = "ttl"
	// ExpiryLease: a lease the server counts in whole seconds, kept alive
	// while held; it lapses when the keep-alives stop.
	ExpiryLease Expiry = "lease"
	// ExpirySession: the lock lasts as long as its holder's session (a
	// connection, a transaction, an open file, a process): no TTL, freed
	// when the session ends.
	ExpirySession Expiry = "session"
	// ExpiryProcess: the lock lasts until released or until its holder's
	// process exits; a holder that dies inside a process that lives on
	// keeps it.
	ExpiryProcess Expiry = "process"
)

// Token is what a holder is given to show it holds the lock.
type Token string

// The tokens.
const (
	TokenNone     Token = "none"     // nothing: the session is the proof
	TokenRandom   Token = "random"   // random bytes the lock stores and a release compares
	TokenFence    Token = "fence"    // a random token and a fence that grows with each holder
	TokenRevision Token = "revision" // the server's revision of the lock key: a fence
)

// Renewal is what extends a held lock's life.
type Renewal string

// The renewals.
const (
	RenewalNone      Renewal = "none"
	RenewalWatchdog  Renewal = "watchdog"   // the holder extends the TTL every third of it
	RenewalKeepAlive Renewal = "keep-alive" // the holder keeps its lease alive
	// RenewalLibrary: the lock's library extends its key itself, on a
	// timer of its own (every TTL/RenewEvery), and tells the holder when
	// an extension fails (rueidislock cancels the lock's context).
	RenewalLibrary Renewal = "library"
)

// Nodes is how many independent servers the lock runs on.
type Nodes struct {
	Min     int `json:"min"`
	Default int `json:"default"`
}

// Traits are what a strategy's lock is.
type Traits struct {
	Server  Server  `json:"server"`
	Expiry  Expiry  `json:"expiry"`
	Token   Token   `json:"token"`
	Renewal Renewal `json:"renewal"`
	// RenewEvery: a lock its library renews (RenewalLibrary) is extended
	// every TTL/RenewEvery; zero when unknown. (A watchdog's period is
	// its kind's: a third.)
	RenewEvery int `json:"renew_every,omitempty"`
	// ExpiryApart: the TTL is set by a command of its own after the lock
	// is taken, so a holder that dies between the two leaves a lock with
	// no TTL.
	ExpiryApart bool `json:"expiry_apart,omitempty"`
	// Unit is the server's grain of time for the expiry (a second for
	// memcached and etcd); zero for none.
	Unit  Millis `json:"unit_ms,omitempty"`
	Nodes Nodes  `json:"nodes"`
	// OneMachine: the lock is kept by this machine's kernel, so processes
	// on other machines never see it.
	OneMachine bool `json:"one_machine,omitempty"`
	// Excludes: a holder keeps the others out. False for no lock at all
	// and for optimistic concurrency, which holds nothing.
	Excludes bool `json:"excludes"`
	// Cell: the strategy keeps the protected value itself (a row read FOR
	// UPDATE, a value under optimistic concurrency).
	Cell bool `json:"cell,omitempty"`
	// Optimistic: no lock is taken; a write is refused if anyone wrote
	// since the read.
	Optimistic bool `json:"optimistic,omitempty"`
	// ReleaseAny: release deletes the lock whoever holds it (no token is
	// compared).
	ReleaseAny bool `json:"release_any,omitempty"`
	// OwnClock: the server keeps the expiry on its own clock (a row's
	// expiry in the database, memcached's seconds), which the run's log
	// does not show: the lock may be held until it is released.
	OwnClock bool `json:"own_clock,omitempty"`
	// Queued: waiters queue, and a try is refused while another waiter is
	// first, even with nobody holding the lock (etcd's mutex).
	Queued bool `json:"queued,omitempty"`
	// WallClock: the lock's code reads the wall clock (its deadlines and
	// validity), which a simulation cannot move.
	WallClock bool `json:"wall_clock,omitempty"`
	// WallDeadlines: the lock's code sends absolute deadlines read from
	// its own wall clock (SET … PXAT, PEXPIREAT), so a server whose clock
	// reads another time keeps the lock for that much longer or shorter.
	WallDeadlines bool `json:"wall_deadlines,omitempty"`
}

// Millis is a duration written as whole milliseconds.
type Millis int64

// D is m as a duration.
func (m Millis) D() time.Duration { return time.Duration(m) * time.Millisecond }

// HasTTL reports whether a held lock ends by itself after a time: a TTL or
// a lease.
func (t Traits) HasTTL() bool { return t.Expiry == ExpiryTTL || t.Expiry == ExpiryLease }

// Renews reports whether the holder extends the lock while it holds it.
func (t Traits) Renews() bool {
	return t.Renewal == RenewalWatchdog || t.Renewal == RenewalKeepAlive || t.Renewal == RenewalLibrary
}

// Fenced reports whether a holder is given a fence: a number that grows
// with each holder, which a resource can use to refuse a stale holder.
func (t Traits) Fenced() bool { return t.Token == TokenFence || t.Token == TokenRevision }

// MultiNode reports whether the lock is a quorum of independent nodes.
func (t Traits) MultiNode() bool { return t.Nodes.Min > 1 }

// Known reports whether t says anything (a zero Traits says nothing).
func (t Traits) Known() bool { return t.Expiry != "" }
