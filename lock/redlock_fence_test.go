package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// A fenced Redlock's fence comes from the majority that granted it, and
// the next majority — which shares a node with it — counts past it, even
// when the nodes' counters had drifted apart.
func TestFencedRedlockFencesGrowAcrossMajorities(t *testing.T) {
	t.Parallel()
	onBoth(t, 5, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key := s.Key("lock:x")
		// A vote may take a tenth of the TTL: ten seconds leaves a busy
		// machine a second for each; this test is about fences, not time.
		const ttl = 10 * time.Second
		for _, c := range s.Clients() {
			if err := c.Ping(ctx).Err(); err != nil { // dial first: the story is not about dials
				t.Fatal(err)
			}
		}
		live := lock.Clients(s.Clients())
		cut := func(nodes ...int) []lock.Client {
			cs := append([]lock.Client(nil), live...)
			for _, i := range nodes {
				c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
				t.Cleanup(func() { c.Close() })
				cs[i] = c
			}
			return cs
		}
		// Node 0 has counted many locks the others never saw.
		if err := s.Clients()[0].Set(ctx, lock.FenceKey(key), 10, 0).Err(); err != nil {
			t.Fatal(err)
		}
		var rec recorder
		a, err := lock.NewFencedRedlock(cut(3, 4), lock.Options{Clock: s.Clock(), Observer: rec.observe}).TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatalf("nodes 0–2: %v", err)
		}
		if a.Fence != 11 {
			t.Fatalf("fence %d from nodes 0–2 (node 0 at 10): want 11", a.Fence)
		}
		votes := map[int]int64{}
		for _, st := range rec.steps {
			if st.Kind == lock.StepVote && st.OK {
				votes[st.Node] = st.Fence
			}
			if st.Kind == lock.StepAcquired && st.Fence != a.Fence {
				t.Fatalf("acquired step's fence %d, lease's %d", st.Fence, a.Fence)
			}
		}
		if votes[0] != 11 || votes[1] != 1 || votes[2] != 1 || len(votes) != 3 {
			t.Fatalf("per-node fences %v: want node 0 at 11, nodes 1 and 2 at 1", votes)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := lock.NewFencedRedlock(cut(0, 1), lock.Options{Clock: s.Clock()}).TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatalf("nodes 2–4: %v", err)
		}
		if b.Fence <= a.Fence {
			t.Fatalf("the next majority's fence %d is not above %d", b.Fence, a.Fence)
		}
		if err := b.Release(ctx); err != nil {
			t.Fatal(err)
		}
		plain, err := lock.NewRedlock(live, lock.Options{Clock: s.Clock()}).TryAcquire(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if plain.Fence != 0 {
			t.Fatalf("an unfenced Redlock issued fence %d", plain.Fence)
		}
		_ = plain.Release(ctx)
	})
}
