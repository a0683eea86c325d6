package scenario_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// dump maps every key to its value and whether it has a TTL.
func dump(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		v, err := c.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl := c.TTL(ctx, k).Val()
		if ttl > 0 {
			v += " (ttl)"
		}
		out[k] = v
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
