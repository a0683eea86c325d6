package spawn

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Describe is "sentinel: primary 127.0.0.1:1234, replica …" for headers.
func (t *Topology) Describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var parts, sentinels []string
	for _, p := range t.procs {
		_, port, _ := strings.Cut(p.Addr(), ":")
		if p.Role == "sentinel" {
			sentinels = append(sentinels, ":"+port)
			continue
		}
		parts = append(parts, p.Name+" :"+port)
	}
	if len(sentinels) > 0 {
		parts = append(parts, "sentinels "+strings.Join(sentinels, " "))
	}
	return "spawned " + t.name + " on 127.0.0.1: " + strings.Join(parts, ", ")
}

// PrimaryAddr is where node i's primary listens now.
func (t *Topology) PrimaryAddr(i int) string {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	return p.Addr()
}

// Client makes node i of t's client from o: through Sentinel for the
// sentinel topology, as go-redis's failover client finds the primary; else
// one that dials wherever node i's primary listens now, its connections
// wrapped by wrap. (A function, not a method of Topology: see clientOf.)
func Client(t *Topology, i int, o *redis.Options, wrap func(net.Conn) net.Conn) *redis.Client {
	if t.name == TopoSentinel {
		var addrs []string
		for _, s := range t.sentinels {
			addrs = append(addrs, s.Addr())
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: sentinelMaster, SentinelAddrs: addrs,
			Protocol: o.Protocol, DisableIdentity: true, MaxRetries: o.MaxRetries,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			ContextTimeoutEnabled: true, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout,
		})
	}
	d := net.Dialer{Timeout: o.DialTimeout, KeepAlive: 5 * time.Minute}
	o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, t.PrimaryAddr(i))
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
	return redis.NewClient(o)
}

// Pause stops node i's primary with SIGSTOP; resume sends SIGCONT.
func (t *Topology) Pause(i int) error {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	return p.pause()
}

func (t *Topology) Resume(i int) {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	_ = p.resume()
}

func (t *Topology) Paused(i int) bool {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	return p.Paused()
}

// Crash kills node i's primary (SIGKILL); the replication link dies with
// its machine.
func (t *Topology) Crash(i int) {
	t.mu.Lock()
	p, l := t.primary[i], t.links[i]
	t.mu.Unlock()
	if l != nil {
		l.Cut()
	}
	p.kill()
}

// Down reports whether node i's primary is not running.
func (t *Topology) Down(i int) bool {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	return !p.Running()
}

// Restart starts node i's primary again, empty: it has no persistence.
func (t *Topology) Restart(i int) error {
	t.mu.Lock()
	p := t.primary[i]
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), topologyWait)
	defer cancel()
	return p.restart(ctx)
}

// Failover kills node i's primary, with what its replication link still
// held, and promotes the replica: through Sentinel (SENTINEL FAILOVER) in
// the sentinel topology, else with REPLICAOF NO ONE. It says what the
// replica missed.
func (t *Topology) Failover(i int) (string, error) {
	t.mu.Lock()
	old, r, l := t.primary[i], t.replica[i], t.links[i]
	t.mu.Unlock()
	if r == nil || l == nil {
		return "", fmt.Errorf("%s has no replica to fail over to", old.Name)
	}
	lost := l.Cut()
	old.kill()
	ctx, cancel := context.WithTimeout(context.Background(), topologyWait)
	defer cancel()
	c := clientOf(r)
	defer c.Close()
	if t.name == TopoSentinel {
		if err := t.promoteBySentinel(ctx, r); err != nil {
			return "", err
		}
	} else if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return "", fmt.Errorf("REPLICAOF NO ONE on %s: %w", r.Addr(), err)
	}
	t.mu.Lock()
	old.Role, r.Role = "primary, killed", "primary"
	t.primary[i], t.replica[i], t.links[i] = r, nil, nil
	t.mu.Unlock()
	how := "REPLICAOF NO ONE"
	if t.name == TopoSentinel {
		how = "Sentinel promoted it"
	}
	return fmt.Sprintf("primary %s killed; its replica %s is the primary now (%s); %d byte(s) of the replication stream it had not received are lost",
		old.Addr(), r.Addr(), how, lost), nil
}

// promoteBySentinel asks a Sentinel to fail over and waits until every
// Sentinel names r as the primary: a client asks whichever Sentinel it is
// connected to, and one that has not heard of the promotion yet would
// send it to the killed primary.
func (t *Topology) promoteBySentinel(ctx context.Context, r *proc) error {
	s := clientOf(t.sentinels[0])
	defer s.Close()
	if err := s.Do(ctx, "SENTINEL", "FAILOVER", sentinelMaster).Err(); err != nil {
		return fmt.Errorf("SENTINEL FAILOVER on %s: %w", t.sentinels[0].Addr(), err)
	}
	for _, sp := range t.sentinels {
		if err := t.awaitPrimary(ctx, sp, r); err != nil {
			return err
		}
	}
	return nil
}

// awaitPrimary waits until the Sentinel sp names r as the primary.
func (t *Topology) awaitPrimary(ctx context.Context, sp *proc, r *proc) error {
	s := clientOf(sp)
	defer s.Close()
	for {
		a, _ := s.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinelMaster).StringSlice()
		if len(a) == 2 && a[0]+":"+a[1] == r.Addr() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Sentinel %s did not name %s as the primary within %v", sp.Addr(), r.Addr(), topologyWait)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Replicate gives node i a replica trailing it by lag, or makes its
// replica trail by lag from now on.
func (t *Topology) Replicate(i int, lag time.Duration) error {
	t.mu.Lock()
	l := t.links[i]
	t.mu.Unlock()
	if l != nil {
		l.SetLag(lag)
		return nil
	}
	srv, err := exec.LookPath("redis-server")
	if err != nil {
		return &MissingError{"redis-server"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), topologyWait)
	defer cancel()
	return t.addReplica(ctx, i, srv, lag)
}

// Server is one server of a spawned topology as the run shows it.
type Server struct {
	Name  string // "primary", "replica", "sentinel 2", "node 3"
	Role  string // primary, replica, sentinel
	Addr  string // 127.0.0.1:port
	PID   int    // 0 when it is not running
	State string // up, paused, down
	Node  int    // the node it serves; −1 for a Sentinel
}

// Servers lists the topology's servers, as the run shows them.
func (t *Topology) Servers() []Server {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Server, 0, len(t.procs))
	for _, p := range t.procs {
		sp := Server{Name: p.Name, Role: p.Role, Addr: p.Addr(), PID: p.PID(), State: "up", Node: -1}
		switch {
		case !p.Running():
			sp.State = "down"
		case p.Paused():
			sp.State = "paused"
		}
		for i := range t.primary {
			if t.primary[i] == p || t.replica[i] == p {
				sp.Node = i
			}
		}
		out = append(out, sp)
	}
	return out
}

// Name is the topology's name: one of Topologies.
func (t *Topology) Name() string { return t.name }
