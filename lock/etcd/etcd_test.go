package etcd_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	etcdstore "github.com/locklab/locklab/store/etcd"
	"github.com/locklab/locklab/store/storetest"

	_ "github.com/locklab/locklab/store/etcdembed"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcd"
	"github.com/locklab/locklab/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// startEtcd starts n embedded members for the test and opens a store on
// them; both end with the test.
func startEtcd(t *testing.T, n int) (store.EtcdCluster, *store.Store, *etcdstore.Conn) {
	t.Helper()
	c, err := store.StartEtcd(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	st, err := store.Open(context.Background(), store.Config{Nodes: 1, Servers: store.Servers{Etcd: c.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, err := st.Server(store.ServerEtcd)
	if err != nil {
		t.Fatal(err)
	}
	return c, st, v.(*etcdstore.Conn)
}

func TestRegistryNamesEtcd(t *testing.T) {
	t.Parallel()
	info, ok := lock.Lookup("etcd")
	if !ok || info.Server != lock.ServerEtcd {
		t.Fatalf("etcd is not registered on its server: %+v %v", info, ok)
	}
}

func TestExclusionAndFenceGrows(t *testing.T) {
	t.Parallel()
	_, _, e := startEtcd(t, 1)
	ctx := context.Background()
	a, b := etcd.New(e, lock.Options{}), etcd.New(e, lock.Options{})
	la, err := a.TryAcquire(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, "k", 10*time.Second); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("second holder: got %v, want ErrNotObtained", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquire(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Release(ctx)
	if lb.Fence <= la.Fence || la.Fence <= 0 {
		t.Fatalf("fences %d then %d: want positive and growing", la.Fence, lb.Fence)
	}
}

// A holder paused past its lease (its renewals paused with it) loses the
// lock; the next holder gets a larger fence, and the paused holder's write,
// fenced by the lock key's create revision, is refused.
func TestPausedHolderIsFenced(t *testing.T) {
	t.Parallel()
	_, _, e := startEtcd(t, 1)
	ctx := context.Background()
	resume := make(chan struct{})
	paused := etcd.New(e, lock.Options{Hold: func(ctx context.Context) error {
		select {
		case <-resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	l1, err := paused.TryAcquire(ctx, "stock-lock", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The lease lapses on the server; the next one in gets the lock.
	other := etcd.New(e, lock.Options{Retry: lock.Retry{Policy: lock.RetryFixed, Base: 50 * time.Millisecond, MaxRetries: 1 << 20}})
	l2, err := other.Acquire(ctx, "stock-lock", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release(ctx)
	close(resume)
	<-l1.Context().Done() // the first renewal after the pause finds the lease gone
	if !l1.Lost() {
		t.Fatalf("paused holder: context ended with %v, want ErrLockLost", context.Cause(l1.Context()))
	}
	if l2.Fence <= l1.Fence {
		t.Fatalf("fences %d then %d: want the later holder's larger", l1.Fence, l2.Fence)
	}
	if ok, err := paused.Put(ctx, l1, "stock", "stale"); err != nil || ok {
		t.Fatalf("paused holder's write: ok=%v err=%v, want refused", ok, err)
	}
	if ok, err := other.Put(ctx, l2, "stock", "fresh"); err != nil || !ok {
		t.Fatalf("holder's write: ok=%v err=%v, want stored", ok, err)
	}
	if v, err := other.Get(ctx, "stock"); err != nil || v != "fresh" {
		t.Fatalf("stock = %q (%v), want fresh", v, err)
	}
	if err := l1.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("paused holder's release: %v, want ErrNotHeld", err)
	}
}

// With three members, stopping the leader mid-run leaves a majority: the
// lock goes on being taken, one holder at a time.
func TestThreeMembersSurviveOneStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members")
	}
	t.Parallel()
	c, _, e := startEtcd(t, 3)
	ctx := context.Background()
	const workers, before, after = 4, 5, 5
	var inside, overlaps, total atomic.Int64
	stopped := make(chan struct{})
	var stopOnce sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := etcd.New(e, lock.Options{Retry: lock.Retry{Policy: lock.RetryFullJitter, Base: 5 * time.Millisecond, Cap: 50 * time.Millisecond, MaxRetries: 1 << 20}})
			for done := 0; done < before+after; {
				if done == before {
					stopOnce.Do(func() {
						if err := c.Stop(max(c.Leader(), 0)); err != nil {
							t.Error(err)
						}
						close(stopped)
					})
					<-stopped
				}
				// A proposal in flight when the leader stops can be dropped,
				// and etcd answers it only at its 5 s request timeout: give
				// up on it sooner and ask again (a write not made is made
				// again in a later turn).
				actx, cancel := context.WithTimeout(ctx, time.Second)
				l, err := m.Acquire(actx, "counter-lock", 10*time.Second)
				cancel()
				if err != nil {
					var oe *lock.OpError
					if errors.As(err, &oe) || errors.Is(err, lock.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
						continue // an answer lost while a member went away: try again
					}
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				ok, err := m.Put(pctx, l, "counter", strconv.Itoa(w))
				cancel()
				inside.Add(-1)
				l.Release(ctx)
				if err == nil && ok {
					done++
					total.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if overlaps.Load() > 0 {
		t.Errorf("%d overlaps", overlaps.Load())
	}
	if got := total.Load(); got != workers*(before+after) {
		t.Errorf("%d fenced writes landed, want %d", got, workers*(before+after))
	}
}

// startEtcdB starts one embedded member for a benchmark and opens a store
// on it; both end with the benchmark.
func startEtcdB(b *testing.B) (*etcdstore.Conn, error) {
	c, err := store.StartEtcd(1)
	if err != nil {
		return nil, err
	}
	b.Cleanup(func() { c.Close() })
	st, err := store.Open(context.Background(), store.Config{Nodes: 1, Servers: store.Servers{Etcd: c.URL()}})
	if err != nil {
		return nil, err
	}
	b.Cleanup(func() { st.Close() })
	v, err := st.Server(store.ServerEtcd)
	if err != nil {
		return nil, err
	}
	return v.(*etcdstore.Conn), nil
}

// BenchmarkAcquireRelease is one uncontended lock cycle on an embedded
// member: take the mutex on the worker's lease, delete the key.
func BenchmarkAcquireRelease(b *testing.B) {
	e, err := startEtcdB(b)
	if err != nil {
		b.Fatal(err)
	}
	m := etcd.New(e, lock.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := m.TryAcquire(ctx, "bench", 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// leaseOf is the lease part of an etcd lock's token.
func leaseOf(l *lock.Lease) string { id, _, _ := strings.Cut(l.Token, "@"); return id }

// A worker's locks share its lease: one lease granted for many cycles, and
// its keys are gone after each release.
func TestCyclesReuseTheWorkersLease(t *testing.T) {
	t.Parallel()
	_, _, e := startEtcd(t, 1)
	ctx := context.Background()
	m := etcd.New(e, lock.Options{})
	ids := map[string]bool{}
	for i := range 20 {
		l, err := m.TryAcquire(ctx, "k"+strconv.Itoa(i%2), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ids[leaseOf(l)] = true
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(ids) != 1 {
		t.Errorf("20 cycles of one worker used %d leases, want 1", len(ids))
	}
	r, err := e.Client.Get(ctx, e.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || r.Count != 0 {
		t.Errorf("after the releases %d keys are left under the run's prefix (%v), want 0", r.Count, err)
	}
}

// A crashed holder's lock is free only after its TTL, and the worker's
// next lock is on a new lease.
func TestAbandonedLockLapsesAtItsTTL(t *testing.T) {
	t.Parallel()
	_, _, e := startEtcd(t, 1)
	ctx := context.Background()
	a, b := etcd.New(e, lock.Options{}), etcd.New(e, lock.Options{})
	la, err := a.TryAcquire(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	la.Abandon()
	if _, err := b.TryAcquire(ctx, "k", time.Second); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("right after the crash: %v, want ErrNotObtained (the lease lives to its TTL)", err)
	}
	var lb *lock.Lease
	for deadline := time.Now().Add(10 * time.Second); lb == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if lb, err = b.TryAcquire(ctx, "k", time.Second); err != nil && !errors.Is(err, lock.ErrNotObtained) {
			t.Fatal(err)
		}
	}
	if lb == nil {
		t.Fatal("the crashed holder's lock was never freed")
	}
	defer lb.Release(ctx)
	l2, err := a.TryAcquire(ctx, "other", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release(ctx)
	if leaseOf(l2) == leaseOf(la) {
		t.Errorf("the crashed worker's next lock reused its abandoned lease %s", leaseOf(la))
	}
}

// TestMain registers the etcd strategy alone: the tests link no other
// server's client.
// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they mostly wait on leases, elections
// and dials, not on the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	etcd.Register()
	storetest.WidenParallel(parallelTests)
	os.Exit(m.Run())
}
