package storetest

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// Memcached is a memcached server the test started.
type Memcached struct {
	Addr string
}

// StartMemcached starts memcached on a free loopback port (as nobody when
// the test runs as root) and stops it when tb ends. Without memcached the
// test is skipped, or failed under LOCKLAB_REQUIRE_SERVERS=1.
func StartMemcached(tb testing.TB) *Memcached {
	tb.Helper()
	bin := findBin("memcached", "/usr/bin")
	if bin == "" {
		missing(tb, "memcached on PATH", "apt-get install -y memcached")
	}
	as := unprivileged("memcache", "nobody")
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-c", "1024"}
		if as != nil {
			args = append(args, "-u", "nobody")
		}
		p, err := startProc(nil, "", bin, args...)
		if err != nil {
			tb.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		err = waitFor(p, 10*time.Second, func() error {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return err
			}
			return c.Close()
		})
		if err == nil {
			tb.Cleanup(p.stop)
			return &Memcached{Addr: addr}
		}
		p.stop()
		last = err
	}
	tb.Fatalf("start memcached: %v", last)
	return nil
}
