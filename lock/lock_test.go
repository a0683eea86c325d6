package lock_test

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
	"go.uber.org/goleak"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they mostly wait on TTLs and renewals,
// not on the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	storetest.QuietRedis() // the cut-off clients' dial failures are the point, not news
	storetest.WidenParallel(parallelTests)
	goleak.VerifyTestMain(m)
}

// onBoth runs f against the embedded store and a real redis-server, each
// with n nodes, side by side: each has its own store.
func onBoth(t *testing.T, n int, f func(t *testing.T, s *store.Store)) {
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		s, err := store.Open(context.Background(), store.Config{Nodes: n})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f(t, s)
	})
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		srvs := storetest.StartN(t, n)
		s, err := store.Open(context.Background(), store.Config{URLs: storetest.URLs(srvs)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f(t, s)
	})
}

// recorder collects steps.
type recorder struct {
	mu    sync.Mutex
	steps []lock.Step
}

func (r *recorder) observe(s lock.Step) { r.mu.Lock(); r.steps = append(r.steps, s); r.mu.Unlock() }

func (r *recorder) count(k lock.StepKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}

func TestSafeReleaseNeverDeletesForeignLock(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		var rec recorder
		a := lock.NewSafe(s.Client(), lock.Options{Clock: s.Clock(), Observer: rec.observe})
		b := lock.NewSafe(s.Client(), lock.Options{Clock: s.Clock()})
		la, err := a.TryAcquire(ctx, key, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.TryAcquire(ctx, key, time.Second); !errors.Is(err, lock.ErrNotObtained) {
			t.Fatalf("second acquire while held: %v", err)
		}
		s.Clock().Sleep(ctx, 80*time.Millisecond) // A's TTL lapses
		lb, err := b.TryAcquire(ctx, key, time.Second)
		if err != nil {
			t.Fatalf("acquire after expiry: %v", err)
		}
		if err := la.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("stale release: got %v, want ErrNotHeld", err)
		}
		if got := s.Client().Get(ctx, key).Val(); got != lb.Token {
			t.Fatalf("B's lock after A's release: %q, want B's token", got)
		}
		if rec.count(lock.StepReleaseFailed) != 1 {
			t.Fatal("observer did not see release_failed")
		}
		if err := lb.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNaiveDeletesForeignLock(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		a := lock.NewNaive(s.Client(), lock.Options{Clock: s.Clock()}, nil)
		b := lock.NewNaive(s.Client(), lock.Options{Clock: s.Clock()}, nil)
		la, err := a.TryAcquire(ctx, key, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		s.Clock().Sleep(ctx, 80*time.Millisecond)
		if _, err := b.TryAcquire(ctx, key, time.Second); err != nil {
			t.Fatal(err)
		}
		if err := la.Release(ctx); err != nil {
			t.Fatalf("naive release: %v", err)
		}
		if n := s.Client().Exists(ctx, key).Val(); n != 0 {
			t.Fatal("naive DEL did not delete B's lock; the flaw it shows is gone")
		}
	})
}

func TestNaiveCrashPointLeavesNoTTL(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		n := lock.NewNaive(s.Client(), lock.Options{Clock: s.Clock()}, func(string) bool { return true })
		if _, err := n.TryAcquire(ctx, key, time.Second); !errors.Is(err, lock.ErrCrashed) {
			t.Fatalf("got %v, want ErrCrashed", err)
		}
		if ttl := s.Client().PTTL(ctx, key).Val(); ttl != -1*time.Nanosecond && ttl != -1*time.Millisecond {
			t.Fatalf("PTTL after crash = %v, want -1 (no TTL)", ttl)
		}
	})
}

func TestFencesIncreaseOnlyOnSuccess(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		f := lock.NewFenced(s.Client(), lock.Options{Clock: s.Clock()})
		g := lock.NewFenced(s.Client(), lock.Options{Clock: s.Clock()})
		var last int64
		for i := range 5 {
			l, err := f.TryAcquire(ctx, key, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if l.Fence <= last {
				t.Fatalf("acquire %d: fence %d not above %d", i, l.Fence, last)
			}
			last = l.Fence
			for range 3 {
				if _, err := g.TryAcquire(ctx, key, time.Second); !errors.Is(err, lock.ErrNotObtained) {
					t.Fatalf("acquire while held: %v", err)
				}
			}
			if got, _ := s.Client().Get(ctx, lock.FenceKey(key)).Int64(); got != last {
				t.Fatalf("failed acquires moved the fence counter to %d (last fence %d)", got, last)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestWatchdogKeepsShortLockAcrossLongWork(t *testing.T) {
	t.Parallel()
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		var rec recorder
		w := lock.NewWatchdog(s.Client(), lock.Options{Clock: s.Clock(), Observer: rec.observe})
		// A 1.2s TTL: a renewal (every 400ms) must be 800ms late in real
		// time before the lock lapses, which a busy machine does not do.
		l, err := w.TryAcquire(ctx, key, 1200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 { // 1.8s of work (one and a half TTLs) in 600ms slices, checking ownership throughout
			if err := s.Clock().Sleep(l.Context(), 600*time.Millisecond); err != nil {
				t.Fatalf("holder's context ended: %v", context.Cause(l.Context()))
			}
			if got := s.Client().Get(ctx, key).Val(); got != l.Token {
				t.Fatalf("lock not held during work: %q", got)
			}
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if n := rec.count(lock.StepRenewed); n < 3 {
			t.Fatalf("%d renewals over 1.8s at ttl/3 = 400ms, want ≥ 3", n)
		}
		if s.Client().Exists(ctx, key).Val() != 0 {
			t.Fatal("lock still there after release")
		}
	})
}

func TestWatchdogReportsLossWhenRenewalBlocked(t *testing.T) {
	t.Parallel()
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		const ttl = 300 * time.Millisecond
		var rec recorder
		w := lock.NewWatchdog(s.Client(), lock.Options{Clock: s.Clock(), Observer: rec.observe})
		l, err := w.TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		s.Clock().Sleep(ctx, ttl/2)
		// The server holds every renewal far longer than the TTL and until
		// the loss is reported: a watchdog that waited for the reply instead
		// of counting the lock's life itself would never report it.
		node := s.Nodes()[0]
		resume := node.Resume
		if !node.Embedded() {
			admin := redis.NewClient(&redis.Options{Addr: node.Addr, DisableIdentity: true})
			defer admin.Close()
			// WRITE pauses the renewal script but not the UNPAUSE below.
			if err := admin.Do(ctx, "CLIENT", "PAUSE", 60000, "WRITE").Err(); err != nil {
				t.Fatal(err)
			}
			resume = func() { _ = admin.Do(ctx, "CLIENT", "UNPAUSE").Err() }
		} else if err := node.Pause(); err != nil {
			t.Fatal(err)
		}
		defer resume()
		select {
		case <-l.Context().Done():
		case <-time.After(30 * time.Second):
			t.Fatal("loss never reported while renewal was blocked")
		}
		if !l.Lost() || rec.count(lock.StepLockLost) != 1 {
			t.Fatalf("lost=%v lock_lost steps=%d", l.Lost(), rec.count(lock.StepLockLost))
		}
		if why := context.Cause(l.Context()).Error(); !strings.Contains(why, "no renewal for a whole TTL") {
			t.Fatalf("loss reported as %q; want it counted from the last renewal", why)
		}
		resume()
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = l.Release(rctx)
	})
}

func TestRedlockQuorum(t *testing.T) {
	t.Parallel()
	onBoth(t, 5, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		// A vote may take a tenth of the TTL: ten seconds leaves a busy
		// machine a second for each; this test is about quorums, not time.
		const ttl = 10 * time.Second
		live := lock.Clients(s.Clients())
		dead := func(n int) []lock.Client {
			cs := append([]lock.Client(nil), live...)
			for i := range n {
				c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
				t.Cleanup(func() { c.Close() })
				cs[i] = c
			}
			return cs
		}
		var rec recorder
		r := lock.NewRedlock(dead(2), lock.Options{Clock: s.Clock(), Observer: rec.observe})
		l, err := r.TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatalf("2 of 5 down: %v", err)
		}
		if l.Validity <= 0 || l.Validity >= ttl {
			t.Fatalf("validity %v", l.Validity)
		}
		if rec.count(lock.StepVote) != 5 {
			t.Fatalf("%d votes, want 5", rec.count(lock.StepVote))
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range s.Clients() {
			if c.Exists(ctx, key).Val() != 0 {
				t.Fatalf("node %d still holds the key after release", i)
			}
		}

		r3 := lock.NewRedlock(dead(3), lock.Options{Clock: s.Clock()})
		_, err = r3.TryAcquire(ctx, key, ttl)
		var qe *lock.QuorumError
		if !errors.As(err, &qe) || !errors.Is(err, lock.ErrNotObtained) || qe.Granted != 2 || len(qe.Nodes) != 3 {
			t.Fatalf("3 of 5 down: got %v", err)
		}
		for i, c := range s.Clients()[3:] {
			if c.Exists(ctx, key).Val() != 0 {
				t.Fatalf("node %d kept a partial lock after a failed acquire", i+3)
			}
		}

		all := lock.NewRedlock(live, lock.Options{Clock: s.Clock()})
		l, err = all.TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range s.Clients() {
			if c.Exists(ctx, key).Val() != 0 {
				t.Fatalf("node %d: release did not reach it", i)
			}
		}
	})
}

func TestAcquireRetriesUntilFree(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		holder := lock.NewSafe(s.Client(), lock.Options{Clock: s.Clock()})
		l, _ := holder.TryAcquire(ctx, key, time.Second)
		go func() {
			s.Clock().Sleep(ctx, 50*time.Millisecond)
			l.Release(ctx)
		}()
		var rec recorder
		w := lock.NewSafe(s.Client(), lock.Options{Clock: s.Clock(), Observer: rec.observe,
			Retry: lock.Retry{Policy: lock.RetryFixed, Base: 10 * time.Millisecond, MaxRetries: 50}})
		got, err := w.Acquire(ctx, key, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got.Attempt < 2 || rec.count(lock.StepBackoff) != got.Attempt-1 {
			t.Fatalf("attempt %d, backoffs %d", got.Attempt, rec.count(lock.StepBackoff))
		}
		got.Release(ctx)
		none := lock.NewSafe(s.Client(), lock.Options{Clock: s.Clock()})
		l2, _ := holder.TryAcquire(ctx, key, time.Second)
		defer l2.Release(ctx)
		if _, err := none.Acquire(ctx, key, time.Second); !errors.Is(err, lock.ErrNotObtained) {
			t.Fatalf("no retry policy: %v", err)
		}
	})
}

func TestAbandonedWatchdogLapses(t *testing.T) {
	onBoth(t, 1, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		w := lock.NewWatchdog(s.Client(), lock.Options{Clock: s.Clock()})
		l, err := w.TryAcquire(ctx, key, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		l.Abandon()
		s.Clock().Sleep(ctx, 150*time.Millisecond)
		if s.Client().Exists(ctx, key).Val() != 0 {
			t.Fatal("an abandoned watchdog lock is still renewed")
		}
		if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("release after abandon: %v", err)
		}
	})
}
