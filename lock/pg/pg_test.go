package pg_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pg"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

func servers(t *testing.T) lock.Servers {
	pg := storetest.StartPostgres(t)
	st, err := store.Open(context.Background(), store.Config{Nodes: 1, Servers: store.Servers{Postgres: pg.URL}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return lock.Servers{Conn: func(k lock.Server) (any, error) { return st.Server(string(k)) }, Cleanup: st.AtClose}
}

func newLock(t *testing.T, s lock.Servers, name string) lock.Locker {
	l, err := lock.NewOn(name, s, lock.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A dead holder's session lock is free at once; a lock-table row waits for
// its expiry.
func TestAHolderDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts postgres")
	}
	s := servers(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		freeSoon bool
	}{{"pg-advisory", true}, {"pg-advisory-xact", true}, {"pg-row", true}, {"pg-table", false}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newLock(t, s, tc.name), newLock(t, s, tc.name)
			key := "locklab:test:" + tc.name
			la, err := a.TryAcquire(ctx, key, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.TryAcquire(ctx, key, 3*time.Second); !errors.Is(err, lock.ErrNotObtained) {
				t.Fatalf("second taker: %v, want ErrNotObtained", err)
			}
			la.Abandon()
			// The server notices a closed session at its own pace: poll.
			var lb *lock.Lease
			deadline := time.Now().Add(30 * time.Second)
			for lb == nil && time.Now().Before(deadline) {
				if lb, err = b.TryAcquire(ctx, key, 3*time.Second); err != nil && !errors.Is(err, lock.ErrNotObtained) {
					t.Fatal(err)
				}
				if lb == nil && !tc.freeSoon {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if tc.freeSoon && lb == nil {
				t.Fatal("the dead holder's lock was never freed")
			}
			if !tc.freeSoon && lb != nil {
				t.Fatal("the lock table freed a dead holder's row before its expiry")
			}
			if lb != nil {
				if err := lb.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestMain registers this package's strategies alone: the tests link no
// other server's client.
func TestMain(m *testing.M) {
	pg.Register()
	os.Exit(m.Run())
}
