// Package etcd is a run's connection to etcd: the keys under its prefix
// and the leases it granted, removed when the run ends.
package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
)

func init() {
	// gRPC would print its reconnection attempts to stderr, over the TUI.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// Conn is a run's connection to etcd: a cluster the user named, or members
// embedded for the run. Every key the run writes there lives under Prefix,
// and every lease it grants is recorded; both are removed when the store
// closes (an embedded cluster is stopped and its data removed).
type Conn struct {
	Client *clientv3.Client
	Prefix string // locklab/<run-id>/
	Addr   string // the endpoints, never a password
	// embedded: the run's own members, stopped after it (a failure to
	// clean up on them is no one's concern).
	embedded bool

	mu     sync.Mutex
	leases map[clientv3.LeaseID]bool
}

// Granted records a lease the run granted, for cleanup.
func (e *Conn) Granted(id clientv3.LeaseID) {
	e.mu.Lock()
	e.leases[id] = true
	e.mu.Unlock()
}

// Revoked forgets a lease the run revoked (or saw lapse).
func (e *Conn) Revoked(id clientv3.LeaseID) {
	e.mu.Lock()
	delete(e.leases, id)
	e.mu.Unlock()
}

// endpoints splits "http://u:p@h:2379,h2:2379" into endpoints without
// user information, and the user and password given with the first that has
// them.
func endpoints(raw string) (eps []string, user, pass string, err error) {
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		s := part
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		u, perr := url.Parse(s)
		if perr != nil || u.Host == "" || u.Port() == "" || (u.Scheme != "http" && u.Scheme != "https") ||
			(u.Path != "" && u.Path != "/") {
			return nil, "", "", store.NewURLError(fmt.Sprintf("invalid etcd URL %s: want http://host:port[,http://host:port…]", store.RedactAs(part, "")))
		}
		if u.User != nil && user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		eps = append(eps, u.Scheme+"://"+u.Host)
	}
	if len(eps) == 0 {
		return nil, "", "", store.NewURLError("invalid etcd URL: empty; want http://host:port")
	}
	return eps, user, pass, nil
}

// Open connects to the etcd cluster at raw (comma-separated endpoints)
// for the run r and checks that it answers.
func Open(ctx context.Context, raw string, r store.Run) (*Conn, error) {
	eps, user, pass, err := endpoints(raw)
	if err != nil {
		return nil, err
	}
	addr := strings.Join(eps, ",")
	for _, s := range []string{"http://", "https://"} {
		addr = strings.ReplaceAll(addr, s, "")
	}
	fail := func(err error) error {
		msg := store.FirstLine(err.Error())
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "no answer within 3s"
		}
		return &store.ServerError{Kind: "etcd", Addr: addr, Err: errors.New(store.ScrubAs(msg, raw)),
			Hint: "is the server running? Start one with `docker compose up -d etcd`"}
	}
	if err := allRefuse(ctx, eps); err != nil {
		return nil, fail(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, Username: user, Password: pass,
		DialTimeout: 3 * time.Second, Logger: zap.NewNop(), Context: context.WithoutCancel(ctx)})
	if err != nil {
		return nil, fail(err)
	}
	e := &Conn{Client: c, Prefix: "locklab/" + r.ID + "/", Addr: addr, embedded: r.Embedded, leases: map[clientv3.LeaseID]bool{}}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Get(cctx, e.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		c.Close()
		return nil, fail(err)
	}
	return e, nil
}

// allRefuse returns the first endpoint's dial error when every endpoint
// refuses a connection outright: etcd's client would retry until its
// dial timeout and then say only that nothing answered. An endpoint that
// accepts, or does not answer the dial at once, is left to the client.
func allRefuse(ctx context.Context, eps []string) error {
	var first error
	for _, ep := range eps {
		u, err := url.Parse(ep)
		if err != nil {
			return nil
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err == nil {
			c.Close()
			return nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		first = cmp.Or(first, err)
	}
	return first
}

// Close revokes the leases the run granted, deletes the keys under its
// prefix (and only those), then closes the client. Each revocation may
// take up to revokeWait past ctx's deadline: a revocation is a consensus
// write, which on a busy machine took longer than a run's cleanup allows
// (the lease then stayed until its TTL, unknown to anyone).
func (e *Conn) Close(ctx context.Context) error {
	e.mu.Lock()
	ids := e.leases
	e.leases = map[clientv3.LeaseID]bool{}
	e.mu.Unlock()
	var errs []error
	for id := range ids {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeWait)
		_, err := e.Client.Revoke(rctx, id)
		cancel()
		if err != nil && !strings.Contains(err.Error(), "lease not found") {
			errs = append(errs, err)
			break // the server is gone: the rest would time out alike
		}
	}
	if len(errs) == 0 {
		if _, err := e.Client.Delete(ctx, e.Prefix, clientv3.WithPrefix()); err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	if len(errs) > 0 && !e.embedded {
		err = fmt.Errorf("store: cleanup on etcd %s: %s", e.Addr, store.FirstLine(errors.Join(errs...).Error()))
	}
	e.Client.Close()
	return err
}

// revokeWait bounds one lease's revocation in Close.
const revokeWait = 3 * time.Second

// Address is where the server is: host:port (and database), never a
// password.
func (x *Conn) Address() string { return x.Addr }

// Register makes stores opened from now on reach etcd servers through
// Open; the strategies on etcd call it when they register.
func Register() {
	store.RegisterDriver(store.ServerEtcd, func(ctx context.Context, raw string, r store.Run) (store.Conn, error) {
		c, err := Open(ctx, raw, r)
		if err != nil {
			return nil, err // not a nil *Conn in an interface
		}
		return c, nil
	})
}
