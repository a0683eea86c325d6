package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// Safety is what a short run of a strategy showed, beside its speed: a
// holder paused past its TTL (its renewals paused with it) while another
// tries the lock, and a holder that crashes (Lease.Abandon) while another
// waits.
type Safety struct {
	Strategy string `json:"strategy"`
	TTLMS    int64  `json:"ttl_ms"`   // the TTL both tests asked for
	BoundMS  int64  `json:"bound_ms"` // how long the other waited at most
	// Excludes is false for an optimistic strategy: anyone may read, the
	// write is checked instead; the pause test does not apply.
	Excludes bool `json:"excludes"`
	// SecondHolderMS is when, after the first holder paused, a second one
	// got the lock; -1: none did within BoundMS (the lock survived the
	// pause and everyone waited).
	SecondHolderMS float64 `json:"second_holder_ms"`
	// FencePaused and FenceNext are the two holders' fences (0: none);
	// Fences: the later is larger, so a resource that checks it refuses
	// the paused holder's stale write.
	FencePaused int64 `json:"fence_paused,omitempty"`
	FenceNext   int64 `json:"fence_next,omitempty"`
	Fences      bool  `json:"fences"`
	// DeadFreedMS is when, after its holder crashed, another got the
	// lock; -1: not within BoundMS.
	DeadFreedMS float64 `json:"dead_freed_ms"`
	// OneMachine: the lock lives on this machine (a file, a semaphore),
	// not on a server others can reach.
	OneMachine bool   `json:"one_machine"`
	Error      string `json:"error,omitempty"`
}

// measureSafety runs the two tests of every strategy at once, with ttl.
func measureSafety(ctx context.Context, st *store.Store, names []string, ttl time.Duration) []Safety {
	out := make([]Safety, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = safetyOf(ctx, st, name, ttl)
		}()
	}
	wg.Wait()
	return out
}

// safetyBound is how long the other holder waits: past the TTL as the
// slowest servers count it (memcached rounds up to whole seconds plus
// one, etcd's leases last whole seconds).
func safetyBound(ttl time.Duration) time.Duration { return 3*ttl + 2*time.Second }

func safetyOf(ctx context.Context, st *store.Store, name string, ttl time.Duration) Safety {
	info, _ := lock.Lookup(name)
	bound := safetyBound(ttl)
	s := Safety{Strategy: name, TTLMS: ttl.Milliseconds(), BoundMS: bound.Milliseconds(), Excludes: info.Traits.Excludes,
		OneMachine: info.Server == lock.ServerFile || info.Server == lock.ServerIPC, SecondHolderMS: -1, DeadFreedMS: -1}
	err := errors.Join(s.pause(ctx, st, name, ttl, bound), s.crash(ctx, st, name, ttl, bound))
	if err != nil {
		s.Error = err.Error()
	}
	return s
}

// newLocker is a strategy on the store, its renewals held by hold.
func newLocker(st *store.Store, name string, hold func(context.Context) error) (lock.Locker, error) {
	return lock.NewOn(name, servers(st), lock.Options{Clock: st.Clock(), Hold: hold}, nil)
}

// pause: the first holder pauses (its renewals too) for the whole bound
// while a second tries every 20 ms.
func (s *Safety) pause(ctx context.Context, st *store.Store, name string, ttl, bound time.Duration) error {
	if !s.Excludes {
		return nil
	}
	resume := make(chan struct{})
	paused, err := newLocker(st, name, func(ctx context.Context) error {
		select {
		case <-resume:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		return err
	}
	other, err := newLocker(st, name, nil)
	if err != nil {
		return err
	}
	key := st.Key("bench:safety:pause:" + name)
	first, err := paused.TryAcquire(ctx, key, ttl)
	if err != nil {
		return fmt.Errorf("pause: the first holder: %w", err)
	}
	// The holder resumes before it releases: a library whose release
	// waits for its own renewals (rueidislock) would wait on the pause.
	defer func() {
		close(resume)
		_ = first.Release(context.WithoutCancel(ctx))
	}()
	s.FencePaused = first.Fence
	second, after, err := waitFor(ctx, other, key, ttl, bound)
	if err != nil || second == nil {
		return err
	}
	defer second.Release(context.WithoutCancel(ctx))
	s.SecondHolderMS = float64(after.Microseconds()) / 1000
	s.FenceNext = second.Fence
	s.Fences = s.FencePaused > 0 && s.FenceNext > s.FencePaused
	return nil
}

// crash: the holder crashes (nothing releases or renews its lock) while
// another tries every 20 ms.
func (s *Safety) crash(ctx context.Context, st *store.Store, name string, ttl, bound time.Duration) error {
	dead, err := newLocker(st, name, nil)
	if err != nil {
		return err
	}
	other, err := newLocker(st, name, nil)
	if err != nil {
		return err
	}
	key := st.Key("bench:safety:crash:" + name)
	first, err := dead.TryAcquire(ctx, key, ttl)
	if err != nil {
		return fmt.Errorf("crash: the first holder: %w", err)
	}
	first.Abandon()
	next, after, err := waitFor(ctx, other, key, ttl, bound)
	if err != nil || next == nil {
		return err
	}
	s.DeadFreedMS = float64(after.Microseconds()) / 1000
	return next.Release(context.WithoutCancel(ctx))
}

// waitFor tries key every 20 ms until it is obtained or bound has passed
// (nil, and no error), and says after how long.
func waitFor(ctx context.Context, l lock.Locker, key string, ttl, bound time.Duration) (*lock.Lease, time.Duration, error) {
	start := time.Now()
	for time.Since(start) < bound {
		lease, err := l.TryAcquire(ctx, key, ttl)
		if err == nil {
			return lease, time.Since(start), nil
		}
		if !errors.Is(err, lock.ErrNotObtained) {
			return nil, 0, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	return nil, 0, nil
}
