// Package etcdembed runs real etcd members in this process, each etcd's
// own server on its own ports, for a run that asks for etcd without a
// server of its own. It registers itself with package store when imported: a program
// that offers etcd's lessons with nothing installed imports it (the CLI
// does), and one that does not pays nothing for etcd's server.
package etcdembed

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/store"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/config"
)

func init() { store.RegisterEmbeddedEtcd(func(n int) (store.EtcdCluster, error) { return Start(n) }) }

// Cluster is a cluster of real etcd members run in this process: each
// with its data in a temp directory and its client and peer URLs on free
// loopback ports.
type Cluster struct {
	dir     string
	mu      sync.Mutex
	members []*member // nil once stopped
	urls    []string  // each member's client URL
}

// etcdReady bounds how long members take to elect a leader.
const etcdReady = 20 * time.Second

// Start starts n embedded etcd members forming one cluster, and waits
// until they serve. Close stops them and removes their data.
func Start(n int) (*Cluster, error) {
	var last error
	for range 3 { // a free port can be taken between finding and binding it
		c, err := start(n)
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

func start(n int) (*Cluster, error) {
	n = max(n, 1)
	dir, err := os.MkdirTemp("", "locklab-etcd-")
	if err != nil {
		return nil, fmt.Errorf("store: etcd data directory: %w", err)
	}
	c := &Cluster{dir: dir}
	ports, err := freePorts(2 * n)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	peer := func(i int) url.URL {
		return url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
	}
	initial := types.URLsMap{}
	for i := range n {
		initial[fmt.Sprintf("m%d", i)] = types.URLs{peer(i)}
	}
	cfgs := make([]config.ServerConfig, n)
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		cl := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])}
		cfgs[i] = memberConfig(name, filepath.Join(dir, name), cl, peer(i), initial, filepath.Base(dir))
		c.urls = append(c.urls, cl.String())
	}
	// One after another: a new member first asks its peers whether it
	// joined already, and a peer whose port is bound but not yet served
	// keeps it waiting a second. startMember returns once the member
	// serves its peers, so the next one asks a peer that answers at once;
	// the members then elect a leader together (waited for below).
	errs := make([]error, n)
	c.members = make([]*member, n)
	for i := range n {
		if c.members[i], errs[i] = startMember(cfgs[i]); errs[i] != nil {
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, fmt.Errorf("store: start embedded etcd: %s", firstLine(err))
	}
	deadline := time.After(etcdReady)
	for i, m := range c.members {
		select {
		case <-m.Server.ReadyNotify():
		case err := <-m.Err():
			c.Close()
			return nil, fmt.Errorf("store: embedded etcd member m%d: %v", i, err)
		case <-deadline:
			c.Close()
			return nil, fmt.Errorf("store: embedded etcd: no leader within %s", etcdReady)
		}
	}
	return c, nil
}

// freePorts finds n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("store: a free port for etcd: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// URL is the cluster's client URLs, comma-separated: what --etcd takes.
func (c *Cluster) URL() string { return strings.Join(c.urls, ",") }

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string { return append([]string(nil), c.urls...) }

// Dir is the directory that holds every member's data; Close removes it.
func (c *Cluster) Dir() string { return c.dir }

// Members is how many members the cluster was started with.
func (c *Cluster) Members() int { return len(c.urls) }

// Leader is the index of the member that leads, -1 when none does (or
// it was stopped).
func (c *Cluster) Leader() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.members {
		if m != nil && m.Server.Leader() == m.Server.MemberID() {
			return i
		}
	}
	return -1
}

// Stop shuts member i down, handing its leadership on if it leads, as an
// operator stopping its machine would: the others go on (a majority of
// them keeps the cluster available).
func (c *Cluster) Stop(i int) error {
	c.mu.Lock()
	if i < 0 || i >= len(c.members) {
		c.mu.Unlock()
		return fmt.Errorf("store: no etcd member %d: want 0 to %d", i, len(c.members)-1)
	}
	m := c.members[i]
	c.members[i] = nil
	c.mu.Unlock()
	if m != nil {
		m.Close()
	}
	return nil
}

// Close stops every member and removes their data. The cluster ends with
// the run, so no member hands its leadership on: each stops at once, all
// together (one by one, each waits up to a second for its peers'
// connections to close).
func (c *Cluster) Close() error {
	c.mu.Lock()
	ms := c.members
	c.members = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		if m != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.Server.HardStop()
				m.Close()
			}()
		}
	}
	wg.Wait()
	return os.RemoveAll(c.dir)
}

// firstLine is err's first line: etcd's start errors can run on.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
