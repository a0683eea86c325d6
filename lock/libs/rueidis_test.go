package libs_test

import (
	"context"
	"errors"
	"strings"
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
	srv := storetest.Start(t)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var seen steps
	mk := func() lock.Locker {
		l, err := lock.NewOn("rueidislock", lock.Servers{Redis: lock.Clients(st.Clients())}, lock.Options{Observer: seen.see}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := mk(), mk()
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
