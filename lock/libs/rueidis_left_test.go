package libs

import (
	"strconv"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
)

// An acquire or extension whose deadline had passed when its answer came
// carries the least TTL, not none: a step without a TTL reads, in the log,
// as a lock that never lapses.
func TestLeftOfAPastDeadlineIsTheLeastTTL(t *testing.T) {
	t.Parallel()
	c := &seenClient{kit: lock.NewKit(lock.Options{}), ttl: 2 * time.Second}
	for _, ms := range []int64{time.Now().Add(-time.Second).UnixMilli(), time.Now().UnixMilli()} {
		if got := c.left(strconv.FormatInt(ms, 10)); got != time.Microsecond {
			t.Errorf("a deadline %v ago leaves %v, want 1µs", time.Since(time.UnixMilli(ms)).Round(time.Millisecond), got)
		}
	}
	if got := c.left(strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10)); got < 900*time.Millisecond || got > time.Second {
		t.Errorf("a deadline a second ahead leaves %v", got)
	}
}
