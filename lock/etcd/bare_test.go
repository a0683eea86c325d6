package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcd"
	"github.com/locklab/locklab/store/storetest"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// BenchmarkEtcdBare compares an etcd lock cycle with the bare client's:
// concurrency.Mutex's TryLock then Unlock on a session reused by the
// worker, interleaved in rounds on one embedded member, at 1 and 32
// workers, each on a key of its own. x-bare is locklab's rate over the
// bare client's, the median of the rounds' ratios.
//
//	go test ./lock/etcd -run '^$' -bench Bare -benchtime 11x
func BenchmarkEtcdBare(b *testing.B) {
	c, err := startEtcdB(b)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, workers := range []int{1, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			r := storetest.Interleave(b, workers, 200*time.Millisecond,
				storetest.Contender{Name: "locklab", New: func(i int) func() error {
					m := etcd.New(c, lock.Options{})
					key := fmt.Sprintf("bench:%d:%d", workers, i)
					return func() error {
						l, err := m.TryAcquire(ctx, key, 10*time.Second)
						if err != nil {
							return err
						}
						return l.Release(ctx)
					}
				}},
				storetest.Contender{Name: "concurrency.Mutex", New: func(i int) func() error {
					s, err := concurrency.NewSession(c.Client, concurrency.WithTTL(10))
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					mu := concurrency.NewMutex(s, fmt.Sprintf("%sbare:%d:%d", c.Prefix, workers, i))
					return func() error {
						if err := mu.TryLock(ctx); err != nil {
							return err
						}
						return mu.Unlock(ctx)
					}
				}})
			r.Report(b, 1, 1)
			b.Log(r.Spread(0, 1, 1))
		})
	}
}
