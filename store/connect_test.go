package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

func openErr(t *testing.T, url string) string {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{URLs: []string{url}})
	if err == nil {
		s.Close()
		t.Fatalf("%s: opened", store.Redact(url))
	}
	var ce *store.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: %v is not a ConnectError", store.Redact(url), err)
	}
	return err.Error()
}

func TestAuthErrorsSayCheckThePassword(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t, "--requirepass", "rightPass123")
	for _, url := range []string{
		"redis://:wrongPass456@" + srv.Addr,
		"redis://alice:wrongPass456@" + srv.Addr,
		srv.Addr + "?password=wrongPass456",
		"redis://" + srv.Addr, // NOAUTH
	} {
		msg := openErr(t, url)
		if !strings.Contains(msg, "check the password") || strings.Contains(msg, "docker compose") ||
			strings.Contains(msg, "wrongPass456") || !strings.Contains(msg, srv.Addr) {
			t.Errorf("%s: %s", store.Redact(url), msg)
		}
		if !strings.Contains(msg, "WRONGPASS") && !strings.Contains(msg, "NOAUTH") {
			t.Errorf("%s: the server's words are missing: %s", store.Redact(url), msg)
		}
	}
	for _, url := range []string{"redis://:rightPass123@" + srv.Addr, srv.Addr + "/0?password=rightPass123"} {
		s, err := store.Open(context.Background(), store.Config{URLs: []string{url}})
		if err != nil {
			t.Fatalf("%s: %v", store.Redact(url), err)
		}
		s.Close()
	}
}

func TestRefusedConnectionSaysIsTheServerRunning(t *testing.T) {
	t.Parallel()
	msg := openErr(t, "redis://127.0.0.1:1")
	if !strings.Contains(msg, "is the server running") || !strings.Contains(msg, "docker compose") {
		t.Fatal(msg)
	}
}

// holdConns has n clients of s each hold a connection at once for 300 ms
// (BLPOP on a key nobody pushes), so the pool must open n of them. The
// timeout goes as the server reads it: go-redis's BLPop rounds anything
// under a second up to one.
func holdConns(s *store.Store, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Client().Do(context.Background(), "blpop", s.Key("never"), "0.3")
		}()
	}
	wg.Wait()
}

func TestMaxClientsIsTheServersWordsAndPoolSizeIsHonoured(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t, "--maxclients", "6")
	s, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}, PoolSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holdConns(s, 20)
	err = s.Refused()
	if err == nil {
		t.Fatal("20 connections to a server with maxclients 6: no refusal recorded")
	}
	if msg := err.Error(); !strings.Contains(msg, "max number of clients reached") || !strings.Contains(msg, "pool_size") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "reset by peer") {
		t.Fatalf("refusal: %s", msg)
	}
	// The server hung up before reading a command: none of them ran.
	if got := lock.Classify(err); got != lock.Failed {
		t.Fatalf("a refused connection's command classified %v, want %v: %v", got, lock.Failed, err)
	}

	other := storetest.Start(t, "--maxclients", "6")
	capped, err := store.Open(context.Background(), store.Config{URLs: []string{other.URL + "?pool_size=3"}, PoolSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	if got := capped.Client().(*redis.Client).Options().PoolSize; got != 3 {
		t.Fatalf("pool_size=3 in the URL, pool of %d", got)
	}
	holdConns(capped, 20)
	if err := capped.Refused(); err != nil {
		t.Fatalf("a pool of 3 under maxclients 6 was refused: %v", err)
	}
}

func TestURLOptionsAreHonoured(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	s, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL + "?dial_timeout=7s&read_timeout=4s&client_name=lab"}, PoolSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.Client().(*redis.Client).Options()
	if o.DialTimeout != 7*time.Second || o.ReadTimeout != 4*time.Second || o.ClientName != "lab" || o.PoolSize != 30 {
		t.Fatalf("dial %v read %v name %q pool %d", o.DialTimeout, o.ReadTimeout, o.ClientName, o.PoolSize)
	}
	_, err = store.Open(context.Background(), store.Config{URLs: []string{srv.URL + "?max_retries=3"}})
	var ue *store.URLError
	if !errors.As(err, &ue) {
		t.Fatalf("max_retries: %v", err)
	}
}

func TestTLSErrorsSayCheckRedissAndTheCA(t *testing.T) {
	t.Parallel()
	srv, tlsAddr := storetest.StartTLS(t)
	for url, want := range map[string]string{
		"rediss://" + tlsAddr:  "CA",                                     // a certificate no CA here vouches for
		"redis://" + tlsAddr:   "use rediss://",                          // plain text to the TLS port
		"rediss://" + srv.Addr: "Check rediss:// (TLS) against redis://", // TLS to the plain port
	} {
		t.Run(url, func(t *testing.T) {
			t.Parallel() // each waits out a handshake that fails
			msg := openErr(t, url)
			if !strings.Contains(msg, want) || strings.Contains(msg, "docker compose") {
				t.Errorf("%s: %s", url, msg)
			}
		})
	}
}
