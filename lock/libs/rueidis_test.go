package libs_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// rueidislock renews its own lock: a holder that outlives the validity
// keeps it, a second one is refused, and each extension is a renewed step
// seen on the wire.
func TestRueidislockRenewsAndReleases(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var seen steps
	a, b := seen.lockers(t, "rueidislock", st)
	key := st.Key("lock:r")
	la, err := a.TryAcquire(ctx, key, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // past two validities: the library extends it
	if _, err := b.TryAcquire(ctx, key, 300*time.Millisecond); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("a second holder got in past the validity: %v", err)
	}
	acq := seen.of(lock.StepAcquired)
	if len(acq) != 1 || acq[0].Token != la.Token || la.Token == "" || !strings.Contains(acq[0].Msg, "→OK") {
		t.Fatalf("acquired step %+v: want the library's token and what it sent", acq)
	}
	r := seen.of(lock.StepRenewed)
	if len(r) < 2 || r[0].Token != la.Token {
		t.Fatalf("renewed steps %+v: want the library's extensions", r)
	}
	if d := seen.of(lock.StepDenied); len(d) != 1 || !strings.Contains(d[0].Msg, "→nil") {
		t.Fatalf("denied step %+v", d)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r := seen.of(lock.StepRelease); len(r) != 1 || !r[0].OK {
		t.Fatalf("release steps %+v", r)
	}
	if la.Lost() {
		t.Fatal("a release is not a loss")
	}
	if _, err := b.TryAcquire(ctx, key, 300*time.Millisecond); err != nil {
		t.Fatalf("after the release: %v", err)
	}
}

// A holder paused past the validity: the library's extension, held by the
// pause, gives the lock up when it ends, and the lease says so (its
// context cancelled with ErrLockLost) while another holds the lock.
func TestRueidislockPausedHolderLearnsItLost(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var seen steps
	paused := make(chan struct{})
	close(paused) // not paused
	var gate atomic.Pointer[chan struct{}]
	gate.Store(&paused)
	hold := func(ctx context.Context) error {
		select {
		case <-*gate.Load():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	mk := func(h func(context.Context) error) lock.Locker {
		l, err := lock.NewOn("rueidislock", lock.Servers{Redis: lock.Clients(st.Clients())}, lock.Options{Observer: seen.see, Hold: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := mk(hold), mk(nil)
	key := st.Key("lock:p")
	la, err := a.TryAcquire(ctx, key, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	pause := make(chan struct{})
	gate.Store(&pause)
	time.Sleep(450 * time.Millisecond) // past the validity and past the extension's own deadline
	if _, err := b.TryAcquire(ctx, key, time.Second); err != nil {
		t.Fatalf("the paused holder's lock should have lapsed: %v", err)
	}
	if la.Lost() {
		t.Fatal("a paused holder learned of the loss during its pause")
	}
	close(pause)
	select {
	case <-la.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the library never cancelled the paused holder's lock")
	}
	if !la.Lost() || !errors.Is(context.Cause(la.Context()), lock.ErrLockLost) {
		t.Fatalf("lease context ended with %v, want ErrLockLost", context.Cause(la.Context()))
	}
	if l := seen.of(lock.StepLockLost); len(l) != 1 || l[0].Token != la.Token {
		t.Fatalf("lock_lost steps %+v", l)
	}
	f := seen.of(lock.StepRenewFailed)
	if len(f) != 1 {
		t.Fatalf("renew_failed steps %+v: want the extension that came too late", f)
	}
	// Its deadline passed during the pause: the library gave it up before
	// sending, and the step says so, not that Redis refused it.
	if f[0].Outcome != lock.GaveUp || !strings.Contains(f[0].Msg, "before sending") {
		t.Fatalf("the late extension: outcome %s, %q; want gave up, before sending", f[0].Outcome, f[0].Msg)
	}
	if err := la.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("release after the loss: %v, want not held", err)
	}
}

// The library's own clients end with the run: their connections close.
func TestRueidislockClientsEndWithTheRun(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	conns := func() int {
		s, err := st.Client().ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(s, "\n")
	}
	before := conns()
	var undo []func()
	l, err := lock.NewOn("rueidislock", lock.Servers{Redis: lock.Clients(st.Clients()), Cleanup: func(f func()) { undo = append(undo, f) }}, lock.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	la, err := l.TryAcquire(ctx, st.Key("lock:c"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if conns() <= before {
		t.Fatal("the library's client should have a connection of its own")
	}
	if len(undo) != 1 {
		t.Fatalf("%d cleanups registered, want 1", len(undo))
	}
	undo[0]()
	for deadline := time.Now().Add(2 * time.Second); conns() > before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections after the run's end, %d before the library's", conns(), before)
		}
	}
}

// The acquired step's TTL is what the library's deadline leaves from its
// answer, not the validity asked: the library reads the wall clock before
// it sends, and cuts the deadline to the millisecond, so the key lapses
// that much sooner than the answer plus the validity.
func TestRueidislockAcquiredTTLIsItsDeadlines(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var seen steps
	l, err := lock.NewOn("rueidislock", lock.Servers{Redis: lock.Clients(st.Clients())}, lock.Options{Observer: seen.see}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, ttl := st.Key("lock:d"), 5*time.Second
	la, err := l.TryAcquire(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release(ctx)
	left, err := st.Client().PTTL(ctx, key+":0:rueidislock").Result()
	if err != nil {
		t.Fatal(err)
	}
	acq := seen.of(lock.StepAcquired)
	if len(acq) != 1 {
		t.Fatalf("acquired steps %+v", acq)
	}
	if got := acq[0].TTL; got >= ttl || got <= 0 || left > got+time.Millisecond {
		t.Fatalf("acquired step's TTL %v: want under the %v asked, and at least the key's PTTL %v read after it", got, ttl, left)
	}
}

// lockers are two lockers of strategy on st's Redis clients, their steps
// seen by s.
func (s *steps) lockers(t *testing.T, strategy string, st *store.Store) (lock.Locker, lock.Locker) {
	t.Helper()
	mk := func() lock.Locker {
		l, err := lock.NewOn(strategy, lock.Servers{Redis: lock.Clients(st.Clients())}, lock.Options{Observer: s.see}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return mk(), mk()
}
