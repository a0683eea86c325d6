package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
)

func init() {
	// gRPC would print its reconnection attempts to stderr, over the TUI.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// Etcd is a run's connection to etcd: a cluster the user named, or members
// embedded for the run. Every key the run writes there lives under Prefix,
// and every lease it grants is recorded; both are removed when the store
// closes (an embedded cluster is stopped and its data removed).
type Etcd struct {
	Client *clientv3.Client
	Prefix string // locklab/<run-id>/
	Addr   string // the endpoints, never a password
	// Cluster is the run's embedded cluster; nil on a user's etcd.
	Cluster     EtcdCluster
	stopCluster func(EtcdCluster) error

	mu     sync.Mutex
	leases map[clientv3.LeaseID]bool
}

// Granted records a lease the run granted, for cleanup.
func (e *Etcd) Granted(id clientv3.LeaseID) {
	e.mu.Lock()
	e.leases[id] = true
	e.mu.Unlock()
}

// Revoked forgets a lease the run revoked (or saw lapse).
func (e *Etcd) Revoked(id clientv3.LeaseID) {
	e.mu.Lock()
	delete(e.leases, id)
	e.mu.Unlock()
}

// etcdEndpoints splits "http://u:p@h:2379,h2:2379" into endpoints without
// user information, and the user and password given with the first that has
// them.
func etcdEndpoints(raw string) (eps []string, user, pass string, err error) {
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
			return nil, "", "", &URLError{msg: fmt.Sprintf("invalid etcd URL %s: want http://host:port[,http://host:port…]", redactAs(part, ""))}
		}
		if u.User != nil && user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		eps = append(eps, u.Scheme+"://"+u.Host)
	}
	if len(eps) == 0 {
		return nil, "", "", &URLError{msg: "invalid etcd URL: empty; want http://host:port"}
	}
	return eps, user, pass, nil
}

// openEtcd connects to the etcd cluster at raw (comma-separated endpoints)
// and checks that it answers.
func openEtcd(ctx context.Context, raw, runID string) (*Etcd, error) {
	eps, user, pass, err := etcdEndpoints(raw)
	if err != nil {
		return nil, err
	}
	addr := strings.Join(eps, ",")
	for _, s := range []string{"http://", "https://"} {
		addr = strings.ReplaceAll(addr, s, "")
	}
	fail := func(err error) error {
		msg := firstLine(err.Error())
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "no answer within 3s"
		}
		return &ServerError{Kind: "etcd", Addr: addr, Err: errors.New(scrubAs(msg, raw)),
			Hint: "is the server running? Start one with `docker compose up -d etcd`"}
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, Username: user, Password: pass,
		DialTimeout: 3 * time.Second, Logger: zap.NewNop(), Context: context.WithoutCancel(ctx)})
	if err != nil {
		return nil, fail(err)
	}
	e := &Etcd{Client: c, Prefix: "locklab/" + runID + "/", Addr: addr, leases: map[clientv3.LeaseID]bool{}}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Get(cctx, e.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		c.Close()
		return nil, fail(err)
	}
	return e, nil
}

// close revokes the leases the run granted, deletes the keys under its
// prefix (and only those), then closes the client and any embedded cluster.
func (e *Etcd) close(ctx context.Context) error {
	e.mu.Lock()
	ids := e.leases
	e.leases = map[clientv3.LeaseID]bool{}
	e.mu.Unlock()
	var errs []error
	for id := range ids {
		if _, err := e.Client.Revoke(ctx, id); err != nil && !strings.Contains(err.Error(), "lease not found") {
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
	if len(errs) > 0 && e.Cluster == nil {
		err = fmt.Errorf("store: cleanup on etcd %s: %s", e.Addr, firstLine(errors.Join(errs...).Error()))
	}
	e.Client.Close()
	if e.Cluster != nil {
		return e.stopCluster(e.Cluster) // its data goes with it
	}
	return err
}
