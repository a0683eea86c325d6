package etcd_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	etcdstore "github.com/locklab/locklab/store/etcd"

	"github.com/locklab/locklab/store/etcdembed"

	"github.com/locklab/locklab/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
)

// The store's own etcd tests live here, beside the etcd lock's, whose
// test binary links the embedded server anyway.

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentPort is a loopback port that takes connections and never answers.
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}

func TestEtcdErrorsAreOneLineWithoutThePassword(t *testing.T) {
	t.Parallel()
	addr, silent := closedPort(t), silentPort(t)
	for raw, want := range map[string]string{
		"http://bob:s3cret@" + addr:         "cannot use etcd at " + addr + ": dial tcp " + addr + ": connect: connection refused — is the server running?",
		"http://bob:s3cret@" + silent:       "cannot use etcd at " + silent + ": no answer within 3s — is the server running?",
		"ftp://bob:s3cret@" + addr:          "invalid etcd URL ftp://bob:xxxxx@" + addr,
		"http://bob:s3cret@" + addr + "/db": "invalid etcd URL http://bob:xxxxx@" + addr + "/db",
		" , ":                               "invalid etcd URL: empty",
	} {
		_, err := store.Open(context.Background(), store.Config{Nodes: 1, Servers: store.Servers{Etcd: raw}})
		if err == nil {
			t.Fatalf("%s: opened", raw)
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || strings.Contains(msg, "s3cret") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want one line with %q and no password", raw, msg, want)
		}
	}
}

func TestEtcdEnvNamesTheServer(t *testing.T) {
	t.Setenv(store.ServerEnv.Etcd, "http://localhost:2379")
	if got := (store.Servers{}).FromEnv().Etcd; got != "http://localhost:2379" {
		t.Fatalf("FromEnv: %q", got)
	}
	if !(store.Servers{}).Has(store.ServerEtcd) {
		t.Fatal("etcd needs nothing configured: it is embedded otherwise")
	}
	if n := store.Needs(store.ServerEtcd); n != "--etcd URL or "+store.ServerEnv.Etcd {
		t.Fatalf("without embedded members, etcd needs %q", n)
	}
}

// A run on a user's etcd removes exactly what it made: its keys and leases,
// not a neighbour's.
func TestEtcdRunRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	c, err := store.StartEtcd(1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, "neighbour", "stays"); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Config{Nodes: 1, Servers: store.Servers{Etcd: c.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.Server(store.ServerEtcd)
	if err != nil {
		t.Fatal(err)
	}
	e := v.(*etcdstore.Conn)
	if !strings.Contains(st.Describe(), "etcd 127.0.0.1:") {
		t.Errorf("describe: %q", st.Describe())
	}
	g, err := e.Client.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	e.Granted(g.ID)
	if _, err := e.Client.Put(ctx, e.Prefix+"k", "v", clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Put(ctx, e.Prefix+"plain", "v"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := cli.Get(ctx, "", clientv3.WithFromKey())
	if err != nil {
		t.Fatal(err)
	}
	leases, err := cli.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Kvs) != 1 || string(all.Kvs[0].Key) != "neighbour" || len(leases.Leases) != 0 {
		t.Fatalf("left %d keys (want only the neighbour's) and %d leases", len(all.Kvs), len(leases.Leases))
	}
}

// The embedded etcd starts on first use and goes with the store.
func TestEmbeddedEtcdStartsOnUse(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.Server(store.ServerEtcd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(*etcdstore.Conn); !ok {
		t.Fatalf("got %T", v)
	}
	c := st.EmbeddedEtcd()
	if c == nil || c.Members() != 1 || !strings.Contains(st.Describe(), "embedded etcd ×1") {
		t.Fatalf("cluster %v, describe %q", c, st.Describe())
	}
	url := c.URL()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(url, ","), DialTimeout: time.Second})
	if err != nil {
		return // it does not answer
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, "x"); err == nil {
		t.Fatal("the embedded etcd still answers after the store closed")
	}
}

// A cluster's Close leaves nothing behind: no member serving, none of
// their goroutines, no data directory. It runs alone (not parallel), so
// the goroutines it counts are its own.
func TestEmbeddedClusterLeavesNothingBehind(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	c, err := store.StartEtcd(3)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	leader := c.Leader()
	if err := c.Stop(leader); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "k", "w"); err != nil { // two of three still commit
		t.Fatalf("after member %d stopped: %v", leader, err)
	}
	if now := c.Leader(); now < 0 || now == leader {
		t.Fatalf("leader after member %d stopped: %d", leader, now)
	}
	cli.Close()
	dir := c.(*etcdembed.Cluster).Dir()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data directory %s is still there (%v)", dir, err)
	}
	if ports := listeningPorts(t); len(ports) > 0 {
		t.Fatalf("this process still listens on %v", ports)
	}
	goleak.VerifyNone(t, opts)
}

// listeningPorts are the TCP ports this process listens on, from Linux's
// /proc: a port another process took since is not counted, as dialing
// it would.
func listeningPorts(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.Trim(l[len("socket:"):], "[]")] = true
		}
	}
	var ports []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "0A" && mine[f[9]] {
				_, port, _ := strings.Cut(f[1], ":")
				ports = append(ports, port)
			}
		}
	}
	return ports
}
