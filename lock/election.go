package lock

import (
	"context"
	"errors"
	"sync"
)

// Candidate is one campaigner in a leader election held by a server that
// has elections of its own (etcd's), on a lease of its own. The scenario
// that elects a leader drives it and logs each step; the server's package
// provides it (RegisterElection).
type Candidate interface {
	// Grant asks for the candidate's lease of secs seconds and returns the
	// TTL the server granted (it may round a short one up).
	Grant(ctx context.Context, secs int64) (granted int64, err error)
	// Campaign campaigns as name on the lease until elected; it returns
	// the revision of the leader's key (its fence).
	Campaign(ctx context.Context, name string) (rev int64, err error)
	// KeepAliveOnce renews the lease once and returns its TTL; a lease the
	// server no longer knows gives ErrLeaseGone (or a TTL of 0).
	KeepAliveOnce(ctx context.Context) (ttl int64, err error)
	// Resign gives up leadership; Revoke ends the lease (ErrLeaseGone when
	// it had lapsed).
	Resign(ctx context.Context) error
	Revoke(ctx context.Context) error
	// Token names the lease (its id, in hex).
	Token() string
}

// ErrLeaseGone is a server's answer for a lease it no longer knows.
var ErrLeaseGone = errors.New("lease not found")

var elections struct {
	mu sync.RWMutex
	by map[Server]func(conn any) (Candidate, error)
}

// RegisterElection makes the elections of the server's kind available: f
// makes a candidate on the run's connection to it.
func RegisterElection(s Server, f func(conn any) (Candidate, error)) {
	elections.mu.Lock()
	defer elections.mu.Unlock()
	if elections.by == nil {
		elections.by = map[Server]func(any) (Candidate, error){}
	}
	elections.by[s] = f
}

// NewCandidate makes a candidate in the election of the server's kind, on
// the run's connection conn; false when this program has no such election.
func NewCandidate(s Server, conn any) (Candidate, bool, error) {
	elections.mu.RLock()
	f := elections.by[s]
	elections.mu.RUnlock()
	if f == nil {
		return nil, false, nil
	}
	c, err := f(conn)
	return c, true, err
}
