package memcached_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	mcstore "github.com/locklab/locklab/store/memcached"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/memcached"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// open starts memcached and returns the run's connection to it.
func open(tb testing.TB) *mcstore.Conn {
	tb.Helper()
	mc := storetest.StartMemcached(tb)
	st, err := store.Open(context.Background(), store.Config{Nodes: 1, Servers: store.Servers{Memcached: mc.Addr}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	v, err := st.Server(store.ServerMemcached)
	if err != nil {
		tb.Fatal(err)
	}
	return v.(*mcstore.Conn)
}

func newLock(tb testing.TB, m *mcstore.Conn) lock.Locker {
	tb.Helper()
	l, err := lock.NewOn("memcached-add", lock.Servers{Conn: func(lock.Server) (any, error) { return m, nil }}, lock.Options{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// A holder whose lock is gone and taken by another releases nothing: the
// other holder's lock stays.
func TestReleaseNeverDeletesAnotherHoldersLock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts memcached")
	}
	m := open(t)
	ctx := context.Background()
	a, b := newLock(t, m), newLock(t, m)
	key := "locklab:test:mc:other"
	la, err := a.TryAcquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, key, 5*time.Second); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("a second taker while held: %v, want ErrNotObtained", err)
	}
	// A's lock goes (as at its expiry) and B takes the key.
	if err := m.Client.Delete(key); err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("A's release after B took the key: %v, want ErrNotHeld", err)
	}
	it, err := m.Client.Get(key)
	if err != nil || string(it.Value) != lb.Token {
		t.Fatalf("after A's release the key holds %v (%v), want B's token %s", it, err, lb.Token)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatalf("B's release: %v", err)
	}
	if _, err := m.Client.Get(key); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Fatalf("after B's release the key is still there (%v)", err)
	}
}

// A lock cycle is two commands: an add and a delete, no read.
func TestACycleIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts memcached")
	}
	m := open(t)
	ctx := context.Background()
	l := newLock(t, m)
	before := stats(t, m.Addr)
	const n = 50
	for i := range n {
		lease, err := l.TryAcquire(ctx, "locklab:test:mc:trips:"+strconv.Itoa(i%3), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	after := stats(t, m.Addr)
	gets, sets, dels := after["cmd_get"]-before["cmd_get"], after["cmd_set"]-before["cmd_set"], after["delete_hits"]-before["delete_hits"]
	// The run's heartbeat may write its two records once meanwhile.
	if gets != 0 || sets < n || sets > n+2 || dels != n {
		t.Errorf("%d cycles took %d reads, %d writes, %d deletes; want 0, %d, %d", n, gets, sets, dels, n, n)
	}
}

// stats are memcached's counters.
func stats(t *testing.T, addr string) map[string]int64 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(c)
	for sc.Scan() && sc.Text() != "END" {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "STAT" {
			out[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	return out
}

// A server that answers garbage or a line without end is refused in one
// clean line, never read without bound.
func TestMetaRefusesAHostileServer(t *testing.T) {
	t.Parallel()
	for _, reply := range []string{"SERVER_ERROR out of memory\x1b[31m\r\n", strings.Repeat("A", 4096)} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			bufio.NewReader(c).ReadString('\n')
			c.Write([]byte(reply))
		}()
		m := mcstore.NewMeta(l.Addr().String(), time.Second, 1)
		_, _, err = m.AddCAS("k", []byte("v"), 2)
		l.Close()
		if err == nil || strings.ContainsAny(err.Error(), "\x1b\n") || len(err.Error()) > 200 {
			t.Errorf("reply %.20q: error %q, want one clean line", reply, err)
		}
	}
}

// TestMain registers this package's strategies alone: the tests link no
// other server's client.
func TestMain(m *testing.M) {
	memcached.Register()
	os.Exit(m.Run())
}
