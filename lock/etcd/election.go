package etcd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/lock"
	etcdstore "github.com/locklab/locklab/store/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// candidate campaigns in the run's etcd election, under its prefix, on a
// lease the run records for cleanup.
type candidate struct {
	e  *etcdstore.Conn
	id clientv3.LeaseID
	el *concurrency.Election
}

func newCandidate(conn any) (lock.Candidate, error) {
	e, ok := conn.(*etcdstore.Conn)
	if !ok {
		return nil, fmt.Errorf("lock/etcd: want a *etcd.Conn, got %T", conn)
	}
	return &candidate{e: e}, nil
}

func (c *candidate) Grant(ctx context.Context, secs int64) (int64, error) {
	g, err := grant(ctx, c.e.Client, secs)
	if err != nil {
		return 0, err
	}
	c.id = g.ID
	c.e.Granted(g.ID)
	return g.TTL, nil
}

func (c *candidate) Campaign(ctx context.Context, name string) (int64, error) {
	s, err := concurrency.NewSession(c.e.Client, concurrency.WithLease(c.id), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return 0, err
	}
	// The session's own keep-alives stop once elected (or failed): from
	// then on the leader keeps its lease alive itself, in the log.
	defer s.Orphan()
	c.el = concurrency.NewElection(s, c.e.Prefix+"election/leader")
	if err := c.el.Campaign(ctx, name); err != nil {
		return 0, err
	}
	return c.el.Rev(), nil
}

func (c *candidate) KeepAliveOnce(ctx context.Context) (int64, error) {
	r, err := c.e.Client.KeepAliveOnce(ctx, c.id)
	if err != nil {
		return 0, gone(err)
	}
	return r.TTL, nil
}

func (c *candidate) Resign(ctx context.Context) error {
	if c.el == nil {
		return nil
	}
	return c.el.Resign(ctx)
}

func (c *candidate) Revoke(ctx context.Context) error {
	_, err := c.e.Client.Revoke(ctx, c.id)
	c.e.Revoked(c.id)
	if err != nil {
		return gone(err)
	}
	return nil
}

func (c *candidate) Token() string { return strconv.FormatInt(int64(c.id), 16) }

// gone is lock.ErrLeaseGone for etcd's answer for a lease it no longer
// knows, else err.
func gone(err error) error {
	if status.Code(err) == codes.NotFound || strings.Contains(err.Error(), "requested lease not found") {
		return fmt.Errorf("%w: %s", lock.ErrLeaseGone, oneLine(err))
	}
	return err
}
