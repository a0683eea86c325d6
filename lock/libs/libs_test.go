package libs_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/libs"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// steps collects what a lock did.
type steps struct {
	mu  sync.Mutex
	all []lock.Step
}

func (s *steps) see(st lock.Step) { s.mu.Lock(); s.all = append(s.all, st); s.mu.Unlock() }

func (s *steps) of(k lock.StepKind) []lock.Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []lock.Step
	for _, st := range s.all {
		if st.Kind == k {
			out = append(out, st)
		}
	}
	return out
}

func TestLibrariesExcludeAndAreSeenOnTheWire(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	// What each library's own extend (Refresh, Extend) returns on a lock
	// another holds.
	want := map[string]string{"redislock": "redislock: not obtained", "redsync": "lock already taken, locked nodes: [0]"}
	for _, name := range []string{"redislock", "redsync"} {
		t.Run(name, func(t *testing.T) {
			var seen steps
			mk := func() lock.Locker {
				l, err := lock.NewOn(name, lock.Servers{Redis: lock.Clients(st.Clients())}, lock.Options{Observer: seen.see}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			a, b := mk(), mk()
			key := st.Key("lock:" + name)
			la, err := a.TryAcquire(ctx, key, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.TryAcquire(ctx, key, 300*time.Millisecond); !errors.Is(err, lock.ErrNotObtained) {
				t.Fatalf("a second holder got in: %v", err)
			}
			acq := seen.of(lock.StepAcquired)
			if len(acq) != 1 || !strings.Contains(acq[0].Msg, "sent ") || acq[0].Token != la.Token {
				t.Fatalf("acquired step %+v: want the library's token and what it sent", acq)
			}
			if d := seen.of(lock.StepDenied); len(d) != 1 || !strings.Contains(d[0].Msg, "SET→false") && !strings.Contains(d[0].Msg, "→nil") {
				t.Fatalf("denied step %+v: want the refused command", d)
			}
			// The library's own extend, while it holds the lock: nil.
			if err := la.Extend(ctx); err != nil {
				t.Fatalf("its own extend while it holds the lock: %v", err)
			}
			if r := seen.of(lock.StepRenewed); len(r) != 1 || !strings.Contains(r[0].Msg, "→1") {
				t.Fatalf("renewed steps %+v: want the library's extend and what it sent", r)
			}
			time.Sleep(400 * time.Millisecond) // the TTL lapses
			if _, err := b.TryAcquire(ctx, key, time.Second); err != nil {
				t.Fatalf("after the TTL the lock should be free: %v", err)
			}
			// Its extend once another holds it: what the library returns.
			if err := la.Extend(ctx); !errors.Is(err, lock.ErrNotHeld) || !strings.Contains(err.Error(), want[name]) {
				t.Fatalf("its own extend on another's lock: %v, want not held and %q", err, want[name])
			}
			if f := seen.of(lock.StepRenewFailed); len(f) != 1 || !strings.Contains(f[0].Msg, want[name]) {
				t.Fatalf("renew_failed steps %+v", f)
			}
			if err := la.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
				t.Fatalf("the first holder's late release: %v, want not held", err)
			}
			if f := seen.of(lock.StepReleaseFailed); len(f) != 1 {
				t.Fatalf("release_failed steps %+v", f)
			}
		})
	}
}

// TestMain registers this package's strategies alone: the tests link no
// other server's client.
func TestMain(m *testing.M) {
	libs.Register()
	os.Exit(m.Run())
}
