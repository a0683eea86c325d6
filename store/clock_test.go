package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/store"
)

// At the slowest speed the embedded server's TTLs still follow the clock:
// a 2 ms key lives as long as the clock says, not as long as the wall does.
func TestSlowestClockKeepsTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{Speed: store.MinSpeed})
	c, clk := s.Client(), s.Clock()
	if clk.Speed() != store.MinSpeed {
		t.Fatalf("speed %g, want %g", clk.Speed(), store.MinSpeed)
	}
	key := s.Key("k")
	set := clk.Now()
	if err := c.Set(ctx, key, "v", 2*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // 0.3 ms of virtual time, if the machine keeps up
	n := c.Exists(ctx, key).Val()
	if now := clk.Now(); now-set < 2*time.Millisecond && n != 1 {
		t.Fatalf("the key lapsed at %v of virtual time, before its 2ms TTL", now-set)
	}
	pttl := c.PTTL(ctx, key).Val()
	if left := 2*time.Millisecond - (clk.Now() - set); left > time.Millisecond && pttl < time.Millisecond {
		t.Fatalf("PTTL %v with %v of the TTL left on the clock", pttl, left)
	}
	// The rest of the TTL at full speed (2 ms at the slowest is 40 s of
	// wall): the key lapses when the clock, not the wall, says.
	if err := clk.SetSpeed(store.MaxSpeed); err != nil {
		t.Fatal(err)
	}
	if err := clk.Sleep(ctx, 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if c.Exists(ctx, key).Val() != 0 {
		t.Fatalf("the key outlived its TTL on the clock (%v)", clk.Now()-set)
	}
}

func TestSpeedClampsToTheRange(t *testing.T) {
	t.Parallel()
	clk := store.NewClock(0.00001)
	if clk.Speed() != store.MinSpeed {
		t.Fatalf("0.00001 gave %g, want %g", clk.Speed(), store.MinSpeed)
	}
	_ = clk.SetSpeed(100)
	if clk.Speed() != store.MaxSpeed {
		t.Fatalf("100 gave %g, want %g", clk.Speed(), store.MaxSpeed)
	}
	_ = clk.SetSpeed(0.002)
	if clk.Speed() != 0.002 {
		t.Fatalf("0.002 gave %g", clk.Speed())
	}
}

// WallTime: the embedded node reads this machine's clock, so an absolute
// deadline from the wall clock (SET … PXAT) lasts what it says, at any
// run speed; without it the node's time is the fixed epoch's.
func TestWallTimeNodesReadTheWallClock(t *testing.T) {
	skipMiniredisClockRace(t)
	ctx := context.Background()
	for _, wall := range []bool{true, false} {
		st, err := store.Open(ctx, store.Config{Speed: 0.25, WallTime: wall})
		if err != nil {
			t.Fatal(err)
		}
		now, err := st.Client().Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if off := time.Since(now).Abs(); wall != (off < time.Minute) {
			t.Errorf("WallTime %v: the node's time is %v off the wall clock", wall, off)
		}
		if wall {
			key := st.Key("pxat")
			if err := st.Client().Do(ctx, "SET", key, "v", "PXAT", time.Now().Add(300*time.Millisecond).UnixMilli()).Err(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(450 * time.Millisecond) // real time: at ¼× the run's clock has moved ~110ms
			if n, _ := st.Client().Exists(ctx, key).Result(); n != 0 {
				t.Error("a PXAT deadline 300ms ahead of the wall clock outlived 450ms on a wall-time node")
			}
		}
		st.Close()
	}
}

// A wall-time node judges a deadline at the instant a command is sent,
// from whatever client: one that passes none of the store's hooks (a
// library's own client, as rueidislock's, dials through the node's dialer
// alone) finds a PXAT key gone once its deadline has passed, not a tick
// of the node's idle catch-up later.
func TestWallTimeNodeJudgesEveryClientsCommandAtItsSending(t *testing.T) {
	t.Parallel()
	skipMiniredisClockRace(t)
	ctx := context.Background()
	st := openEmbedded(t, store.Config{WallTime: true})
	o := st.Client().(*redis.Client).Options()
	own := redis.NewClient(&redis.Options{Addr: o.Addr, Dialer: o.Dialer, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer own.Close()
	key := st.Key("pxat")
	lived := 0
	for range 20 {
		at := time.Now().Add(3 * time.Millisecond).UnixMilli()
		if err := own.Do(ctx, "SET", key, "v", "PXAT", at).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(time.UnixMilli(at)))
		n, err := own.Exists(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			lived++
			own.Del(ctx, key)
		}
	}
	if lived > 0 {
		t.Errorf("%d of 20 PXAT keys were still there when asked after their deadline", lived)
	}
}

// skipMiniredisClockRace skips a test that sends SET … PXAT to a node
// whose clock moves in real time, under the race detector: miniredis
// v2.40.0 reads its clock without its lock while SET parses PXAT
// (Miniredis.at, from cmdSet before its transaction), and the node sets
// that clock under the lock at every sync step. The detector reports the
// read, which no code outside miniredis can order; the tests run in
// every pass without it.
func skipMiniredisClockRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("miniredis reads its clock unlocked while parsing PXAT; see skipMiniredisClockRace")
	}
}
