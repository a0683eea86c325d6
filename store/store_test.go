package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	etcdstore "github.com/locklab/locklab/store/etcd"
	mcstore "github.com/locklab/locklab/store/memcached"
	mystore "github.com/locklab/locklab/store/mysql"
	pgstore "github.com/locklab/locklab/store/postgres"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/store/storetest"
	"go.uber.org/goleak"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they mostly wait on TTLs, dials and
// servers, not on the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	// The drivers the strategies beyond Redis register, as lock/all does.
	pgstore.Register()
	mystore.Register()
	mcstore.Register()
	etcdstore.Register()
	storetest.QuietRedis()
	storetest.WidenParallel(parallelTests)
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(spawn.SpawnerLoop))
}

func openEmbedded(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPausedClockFreezesTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{})
	c := s.Client()
	key := s.Key("k")
	if err := s.Clock().SetSpeed(0); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, key, "v", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := c.Exists(ctx, key).Val(); n != 1 {
		t.Fatalf("paused clock: 50ms key gone after 300ms real time")
	}
	if pttl := c.PTTL(ctx, key).Val(); pttl != 50*time.Millisecond {
		t.Fatalf("paused clock: PTTL = %v, want 50ms", pttl)
	}
	if err := s.Clock().SetSpeed(1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for c.Exists(ctx, key).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("resumed clock: key never lapsed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSlowClockStretchesTTL(t *testing.T) {
	ctx := context.Background()
	s := openEmbedded(t, store.Config{Speed: 0.25})
	c := s.Client()
	key := s.Key("k")
	start := time.Now()
	if err := c.Set(ctx, key, "v", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	// At 0.25× a 50 ms TTL lasts about 200 ms of real time.
	time.Sleep(100 * time.Millisecond)
	if c.Exists(ctx, key).Val() != 1 {
		t.Fatalf("0.25×: key gone after %v of real time, before 200ms", time.Since(start))
	}
	time.Sleep(300 * time.Millisecond)
	if c.Exists(ctx, key).Val() != 0 {
		t.Fatalf("0.25×: key still there after %v of real time", time.Since(start))
	}
}

func TestKeyLapsesWithoutCommands(t *testing.T) {
	s := openEmbedded(t, store.Config{Speed: 1})
	key := s.Key("k")
	if err := s.Client().Set(context.Background(), key, "v", 20*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// The server's own view, with no command from any client in between.
	if got := s.Client().Exists(context.Background(), key).Val(); got != 0 {
		t.Fatal("key outlived its TTL")
	}
}

func TestSleepFollowsSpeedChange(t *testing.T) {
	clk := store.NewClock(1)
	done := make(chan error, 1)
	go func() { done <- clk.Sleep(context.Background(), 100*time.Millisecond) }()
	_ = clk.SetSpeed(0)
	select {
	case <-done:
		t.Fatal("sleep ended while the clock was paused")
	case <-time.After(250 * time.Millisecond):
	}
	_ = clk.SetSpeed(10)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("sleep did not end after resuming at 10×")
	}
	if now := clk.Now(); now < 100*time.Millisecond {
		t.Fatalf("sleep woke at virtual %v, before 100ms", now)
	}
}

func TestSleepHonoursContext(t *testing.T) {
	t.Parallel()
	clk := store.NewClock(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clk.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestScaledClock(t *testing.T) {
	t.Parallel()
	clk := store.NewScaledClock(4)
	if got := clk.ToServer(time.Second); got != 4*time.Second {
		t.Fatalf("ToServer(1s) = %v", got)
	}
	if got := clk.FromServer(4 * time.Second); got != time.Second {
		t.Fatalf("FromServer(4s) = %v", got)
	}
	if err := clk.SetSpeed(2); !errors.Is(err, store.ErrFixedSpeed) {
		t.Fatalf("SetSpeed on a scaled clock: %v", err)
	}
}

func TestCleanupTouchesOnlyTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{})
	c := s.Client()
	c.Set(ctx, "other", "1", 0)
	c.Set(ctx, "locklab:someoneelse:stock", "1", 0)
	for _, k := range []string{"stock", "lock:stock", "lock:stock:fence"} {
		c.Set(ctx, s.Key(k), "1", 0)
	}
	if _, err := s.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	keys := c.Keys(ctx, "*").Val()
	if strings.Join(keys, ",") != "locklab:someoneelse:stock,other" && strings.Join(keys, ",") != "other,locklab:someoneelse:stock" {
		t.Fatalf("keys after cleanup: %v", keys)
	}
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := store.Open(context.Background(), store.Config{URLs: []string{"redis://:s3cret@127.0.0.1:1"}})
	var ce *store.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a ConnectError", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("password in error: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v to give up", d)
	}
}

func TestRealServer(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{URLs: []string{srv.URL}, Slowmo: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Kind() != store.Real || !strings.Contains(s.Describe(), srv.Addr) {
		t.Fatalf("kind %v, describe %q", s.Kind(), s.Describe())
	}
	if err := s.Client().Set(ctx, s.Key("x"), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := srv.Client(t).Exists(ctx, s.Key("x")).Val(); n != 0 {
		t.Fatal("Close left the run's key behind")
	}
}

func TestEmbeddedFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{Nodes: 2})
	n, c := s.Nodes()[0], s.Nodes()[0].Client
	c.Set(ctx, s.Key("k"), "v", 0)
	c.Set(ctx, s.Key("t"), "v", time.Second)
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, s.Key("k")).Err(); err == nil {
		t.Fatal("a stopped node answered")
	}
	if err := n.Start(true); err != nil {
		t.Fatal(err)
	}
	if got := c.Get(ctx, s.Key("k")).Val(); got != "v" {
		t.Fatalf("restart with data lost the key: %q", got)
	}
	n.Stop()
	n.Start(false)
	if c.Exists(ctx, s.Key("k")).Val() != 0 {
		t.Fatal("restart without data kept the key")
	}
	other := s.Nodes()[1].Client
	other.Set(ctx, s.Key("t"), "v", time.Second)
	s.Nodes()[1].JumpClock(2 * time.Second)
	if other.Exists(ctx, s.Key("t")).Val() != 0 {
		t.Fatal("a 1s key outlived a 2s clock jump")
	}
}
