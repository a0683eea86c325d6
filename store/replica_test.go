package store_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

func TestFailoverLosesUnreplicatedWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{})
	n, c := s.Nodes()[0], s.Nodes()[0].Client
	c.Set(ctx, s.Key("before"), "v", 0)
	if err := n.Replicate(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, s.Key("old"), "v", 5*time.Second)
	c.RPush(ctx, s.Key("list"), "a", "b")
	c.Incr(ctx, s.Key("n"))
	if err := s.Clock().Sleep(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Written after the replica caught up: within the lag, so lost.
	c.Set(ctx, s.Key("lock"), "w1", 5*time.Second)
	c.Del(ctx, s.Key("before"))
	script := redis.NewScript(`return redis.call("INCR", KEYS[1])`)
	script.Run(ctx, c, []string{s.Key("n")})
	if got := n.Lagging(); got < 3 {
		t.Fatalf("replica should trail by the last three writes, trails by %d", got)
	}
	lost, err := n.Failover()
	if err != nil {
		t.Fatal(err)
	}
	if lost < 3 {
		t.Fatalf("lost %d writes, want the last three", lost)
	}
	if c.Exists(ctx, s.Key("lock")).Val() != 0 {
		t.Fatal("the promoted replica has a write it never received")
	}
	if c.Get(ctx, s.Key("before")).Val() != "v" {
		t.Fatal("the promoted replica lost a key it had before the DEL")
	}
	if got := c.Get(ctx, s.Key("n")).Val(); got != "1" {
		t.Fatalf("counter on the promoted replica = %q, want 1 (the script's INCR was lost)", got)
	}
	if got := c.LRange(ctx, s.Key("list"), 0, -1).Val(); len(got) != 2 {
		t.Fatalf("replicated list = %v", got)
	}
	// The expiry is absolute: 5 s from the write, 300 ms have passed.
	if p := c.PTTL(ctx, s.Key("old")).Val(); p > 4800*time.Millisecond || p < 4*time.Second {
		t.Fatalf("replicated TTL %v, want ≈4.7s", p)
	}
	// The promoted node serves writes and expires keys with the clock.
	c.Set(ctx, s.Key("new"), "v", 50*time.Millisecond)
	s.Clock().Sleep(ctx, 80*time.Millisecond)
	if c.Exists(ctx, s.Key("new")).Val() != 0 {
		t.Fatal("a key on the promoted node outlived its TTL")
	}
	// The old primary came back as a replica: a second failover, after
	// the lag, loses nothing.
	c.Set(ctx, s.Key("kept"), "v", 0)
	s.Clock().Sleep(ctx, 250*time.Millisecond)
	if lost, err := n.Failover(); err != nil || lost != 0 {
		t.Fatalf("second failover: lost %d, %v", lost, err)
	}
	if c.Get(ctx, s.Key("kept")).Val() != "v" {
		t.Fatal("a write older than the lag was lost")
	}
}

// A node that comes back while something else holds its old port listens
// on another, and its clients find it there.
func TestNodeComesBackWhenItsPortWasTaken(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := s.Nodes()[0]
	if err := n.Client.Set(ctx, s.Key("k"), "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", n.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := n.Start(true); err != nil {
		t.Fatal(err)
	}
	if got, err := n.Client.Get(ctx, s.Key("k")).Result(); err != nil || got != "v" {
		t.Fatalf("after coming back on another port: %q, %v", got, err)
	}
}
