package memcached_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/store/storetest"
)

// BenchmarkMemcachedBare compares a memcached-add lock cycle with the bare
// client's: gomemcache's Add then Delete (two round trips, and a release
// that would delete another holder's lock), interleaved in rounds on one
// memcached, at 1 and 32 workers, each on a key of its own. x-bare is
// locklab's rate over gomemcache's, the median of the rounds' ratios.
//
//	go test ./lock/memcached -run '^$' -bench Bare -benchtime 7x
func BenchmarkMemcachedBare(b *testing.B) {
	m := open(b)
	ctx := context.Background()
	bare := memcache.New(m.Addr)
	bare.MaxIdleConns = 64
	for _, workers := range []int{1, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			r := storetest.Interleave(b, workers, 200*time.Millisecond,
				storetest.Contender{Name: "locklab", New: func(i int) func() error {
					l := newLock(b, m)
					key := fmt.Sprintf("locklab:bench:mc:%d:%d", workers, i)
					return func() error {
						lease, err := l.TryAcquire(ctx, key, 10*time.Second)
						if err != nil {
							return err
						}
						return lease.Release(ctx)
					}
				}},
				storetest.Contender{Name: "gomemcache", New: func(i int) func() error {
					key := fmt.Sprintf("locklab:bench:bare:%d:%d", workers, i)
					return func() error {
						if err := bare.Add(&memcache.Item{Key: key, Value: []byte("token"), Expiration: 11}); err != nil {
							return err
						}
						if err := bare.Delete(key); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
							return err
						}
						return nil
					}
				}})
			r.Report(b, 1, 1)
			b.Log(r.Spread(0, 1, 1))
		})
	}
}
