package lock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/store/storetest"
)

// BenchmarkSafeBare compares the safe lock's cycle (SET NX PX, then the
// release script: two round trips) with half of go-redis's own plain SET
// rate (one round trip), and with bsm/redislock's and redsync's cycles,
// interleaved in rounds on one redis-server and one client, at 1 and 32
// workers, each on a key of its own. x-bare is the safe cycle's rate over
// half the SET rate; x-redislock and x-redsync its rate over theirs: the
// medians of the rounds' ratios.
//
//	go test ./lock -run '^$' -bench SafeBare -benchtime 11x
func BenchmarkSafeBare(b *testing.B) {
	ctx := context.Background()
	client := benchClient(b)
	cs := cyclers(ctx, client, 10*time.Second)
	for _, workers := range []int{1, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			contender := func(k int) storetest.Contender {
				return storetest.Contender{Name: cs[k].name, New: func(i int) func() error {
					c := cs[k].new(fmt.Sprintf("bench:bare:%s:%d:%d", cs[k].name, workers, i))
					return c
				}}
			}
			set := storetest.Contender{Name: "go-redis-SET", New: func(i int) func() error {
				key := fmt.Sprintf("bench:bare:set:%d:%d", workers, i)
				return func() error { return client.Set(ctx, key, "1", 10*time.Second).Err() }
			}}
			r := storetest.Interleave(b, workers, 200*time.Millisecond, contender(0), set, contender(1), contender(2))
			r.Report(b, 1, 0.5)
			b.ReportMetric(r.Ratio(0, 2, 1), "x-"+cs[1].name)
			b.ReportMetric(r.Ratio(0, 3, 1), "x-"+cs[2].name)
			b.Log(r.Spread(0, 1, 0.5) + " (half the SET rate)")
			b.Log(r.Spread(0, 2, 1))
			b.Log(r.Spread(0, 3, 1))
		})
	}
}
