package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
)

// oneMachine checks what the one-machine locks promise: a second taker is
// denied while the first holds, and gets the lock once it is released or
// its holder dies (abandon closes what the process would).
func oneMachine(t *testing.T, newLock func() lock.Locker, diesFree bool) {
	ctx := context.Background()
	a, b := newLock(), newLock()
	la, err := a.TryAcquire(ctx, "locklab:test:res", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, "locklab:test:res", time.Second); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("second taker: %v, want ErrNotObtained", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquire(ctx, "locklab:test:res", time.Second)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	lb.Abandon()
	_, err = a.TryAcquire(ctx, "locklab:test:res", time.Second)
	if diesFree && err != nil {
		t.Fatalf("after the holder died: %v, want the lock free", err)
	}
	if !diesFree && !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("after the holder died: %v, want it still held (its process lives on)", err)
	}
}

func TestFlockIsFreedWhenItsHolderDies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oneMachine(t, func() lock.Locker { return lock.NewFlock(func() (string, error) { return dir, nil }, lock.Options{}) }, true)
}

func TestSemaphoreIsRemovedAtTheEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var undo []func()
	oneMachine(t, func() lock.Locker {
		return lock.NewSemaphore(func() (string, error) { return dir, nil }, func(f func()) { undo = append(undo, f) }, lock.Options{})
	}, false)
	if len(undo) != 1 {
		t.Fatalf("%d semaphores to remove, want 1", len(undo))
	}
	undo[0]() // the run ends: the set, still held by the dead holder, is removed
	l, err := lock.NewSemaphore(func() (string, error) { return dir, nil }, func(f func()) { t.Cleanup(f) }, lock.Options{}).TryAcquire(context.Background(), "locklab:test:res", time.Second)
	if err != nil {
		t.Fatalf("after removal: %v, want a fresh semaphore", err)
	}
	l.Release(context.Background())
}
