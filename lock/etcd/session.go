package etcd

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// session is a worker's etcd lease, which its locks' keys are attached to:
// granted at its first lock, reused by the next ones while it is alive,
// renewed while a lock is held. A new one is granted only when it lapsed
// (its holder paused past the TTL: etcd deleted its keys), was abandoned
// (its holder crashed: it lapses at its TTL with every lock on it), or the
// TTL asked for changed.
type session struct {
	id   clientv3.LeaseID
	secs int64         // the TTL asked for, etcd's whole seconds
	ttl  time.Duration // the TTL etcd granted, as the run counts time
	// until is when the lease lapses if not renewed before, on the run's
	// clock, from the sending of the last grant or renewal etcd answered.
	until time.Duration
	gone  bool // lapsed, abandoned or revoked: never reused
	// abandoned: its holder crashed; nothing renews it any more.
	abandoned bool
}

// ownerKey is the session's key under a lock's prefix.
func (s *session) ownerKey(prefix string) string {
	return prefix + "/" + strconv.FormatInt(int64(s.id), 16)
}

// session is the worker's lease for a lock of secs seconds, and how long
// it has left: the one it has when alive for at least half its TTL more,
// renewed first when less, else a new grant.
func (m *Mutex) session(ctx context.Context, secs int64) (*session, time.Duration, error) {
	m.mu.Lock()
	s := m.s
	m.mu.Unlock()
	if s != nil && s.secs == secs {
		now := m.kit.Now()
		m.mu.Lock()
		left, gone := s.until-now, s.gone
		m.mu.Unlock()
		if !gone && left > s.ttl/2 {
			return s, left, nil
		}
		if !gone && left > 0 {
			r, err := m.e.Client.KeepAliveOnce(ctx, s.id)
			if err == nil && r.TTL > 0 {
				m.renewed(s, now, r.TTL)
				return s, m.kit.Virtual(time.Duration(r.TTL) * time.Second), nil
			}
		}
	}
	if s != nil {
		m.retire(s)
	}
	sent := m.kit.Now()
	g, err := grant(ctx, m.e.Client, secs)
	if err != nil {
		return nil, 0, err
	}
	m.e.Granted(g.ID)
	ttl := m.kit.Virtual(time.Duration(g.TTL) * time.Second)
	n := &session{id: g.ID, secs: secs, ttl: ttl, until: sent + ttl}
	m.mu.Lock()
	m.s = n
	m.mu.Unlock()
	return n, ttl, nil
}

// grantWait bounds a lease grant's wait for etcd's answer once the run
// no longer wants it.
const grantWait = 3 * time.Second

// grant asks etcd for a lease of secs seconds. A grant sent is waited for
// even when ctx ends meanwhile (a run's end cancels its workers): etcd
// may have made the lease, and only its answer says which lease to
// revoke; cut off, it was left to lapse unknown at its TTL.
func grant(ctx context.Context, c *clientv3.Client, secs int64) (*clientv3.LeaseGrantResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grantWait)
	defer cancel()
	return c.Grant(gctx, secs)
}

// renewed records a renewal etcd answered with ttl seconds left, sent at
// sent.
func (m *Mutex) renewed(s *session, sent time.Duration, ttl int64) {
	m.mu.Lock()
	s.until = max(s.until, sent+m.kit.Virtual(time.Duration(ttl)*time.Second))
	m.mu.Unlock()
}

// lapsed records that etcd no longer knows s's lease.
func (m *Mutex) lapsed(s *session) {
	m.mu.Lock()
	s.gone = true
	if m.s == s {
		m.s = nil
	}
	m.mu.Unlock()
	m.e.Revoked(s.id)
}

// abandon stops reusing s and leaves its lease to lapse at its TTL, as a
// dead holder's does.
func (m *Mutex) abandon(s *session) {
	m.mu.Lock()
	s.gone, s.abandoned = true, true
	if m.s == s {
		m.s = nil
	}
	m.mu.Unlock()
}

// retire revokes a lease no longer wanted (alive, but of another TTL), or
// forgets one that lapsed or was abandoned.
func (m *Mutex) retire(s *session) {
	m.mu.Lock()
	gone := s.gone
	s.gone = true
	if m.s == s {
		m.s = nil
	}
	m.mu.Unlock()
	if gone {
		return
	}
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := m.e.Client.Revoke(rctx, s.id); err == nil || isLeaseGone(err) {
		m.e.Revoked(s.id)
	}
}

// isAbandoned reports whether s's holder crashed.
func (m *Mutex) isAbandoned(s *session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.abandoned
}
