package store

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Redis is what a run asks of a node's client: every Redis command
// (redis.Cmdable), Do, Process and Close. A node's client is a
// *redis.Client; this interface names no client type on purpose. Since
// go-redis 9.23 a client holds a weak pointer to its own type, and the Go
// compiler builds about 1,500 of go-redis's functions again in every
// package that sees *redis.Client (or *redis.Options, *redis.Conn…),
// directly or through a type of ours: one to two seconds of a first build
// each. The packages that make clients or hand them to a library see it
// (TestFewPackagesSeeTheRedisClient lists them); the rest see Redis.
type Redis interface {
	redis.Cmdable
	Do(ctx context.Context, args ...any) *redis.Cmd
	Process(ctx context.Context, cmd redis.Cmder) error
	Close() error
}

// concrete is the client behind c: every Redis a store hands out is a
// *redis.Client.
func concrete(c Redis) *redis.Client { return c.(*redis.Client) }

// AutoPipelines are every node's client's automatic pipeliner (go-redis's
// AutoPipeline), in node order; the caller closes them.
func (s *Store) AutoPipelines() ([]Redis, error) {
	aps := make([]Redis, 0, len(s.nodes))
	for _, n := range s.nodes {
		ap, err := concrete(n.Client).AutoPipeline()
		if err != nil {
			for _, a := range aps {
				_ = a.Close()
			}
			return nil, err
		}
		aps = append(aps, ap)
	}
	return aps, nil
}

// DialURL connects to the Redis server at a URL with locklab's client
// options and a dialer that tells a refusal, as Open does but with no run:
// it returns the client and the URL's printed address (no password), or
// Open's errors.
func DialURL(ctx context.Context, raw string) (Redis, string, error) {
	opt, err := ParseURL(raw)
	if err != nil {
		return nil, "", err
	}
	opt = URLClientOptions(opt, Config{})
	TellingDialer(opt)
	addr := Scrub(Addr(opt), raw)
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, opt.DialTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, "", NewConnectError(addr, err, raw)
	}
	return c, addr, nil
}
