package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
)

func TestSkewJumpAndSlew(t *testing.T) {
	t.Parallel()
	var s store.Skew
	if s.At(time.Hour) != 0 || s.Rate(time.Hour) != 1 {
		t.Fatal("a zero skew is not in step")
	}
	s.Jump(time.Second)
	if s.At(0) != time.Second {
		t.Fatalf("after a 1s jump: %v", s.At(0))
	}
	// Slew 1s over 1s from 10s: twice as fast until 11s, then in step.
	s.Slew(10*time.Second, time.Second, time.Second)
	for _, c := range []struct {
		v, want time.Duration
		rate    float64
	}{
		{10 * time.Second, time.Second, 2},
		{10*time.Second + 250*time.Millisecond, 1250 * time.Millisecond, 2},
		{10*time.Second + 500*time.Millisecond, 1500 * time.Millisecond, 2},
		{11 * time.Second, 2 * time.Second, 1},
		{20 * time.Second, 2 * time.Second, 1},
	} {
		if got := s.At(c.v); got != c.want {
			t.Errorf("at %v: offset %v, want %v", c.v, got, c.want)
		}
		if got := s.Rate(c.v); got != c.rate {
			t.Errorf("at %v: rate %g, want %g", c.v, got, c.rate)
		}
	}
	// A slew begun during another keeps what the first had gained.
	s.Slew(12*time.Second, 100*time.Millisecond, 0)
	if got := s.At(12 * time.Second); got != 2100*time.Millisecond {
		t.Fatalf("a slew over 0 is a jump: %v", got)
	}
	var m store.Skew
	m.Slew(0, time.Second, 2*time.Second)
	m.Slew(time.Second, time.Second, time.Second) // 500ms gained so far
	if got := m.At(time.Second); got != 500*time.Millisecond {
		t.Fatalf("a second slew lost the first one's gain: %v", got)
	}
	for v, last := time.Duration(0), time.Duration(0); v < 3*time.Second; v += 7 * time.Millisecond {
		if got := m.At(v); got < last {
			t.Fatalf("the clock went back at %v: %v < %v", v, got, last)
		} else {
			last = got
		}
	}
}

// A node whose clock slews a TTL over a TTL runs twice as fast: its copy
// of a key lapses halfway through the TTL, while a node in step keeps
// its copy. The clock is paused at each look, so what the nodes hold is
// checked against the exact virtual time, however late the look comes.
func TestSlewedNodeLapsesEarly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmbedded(t, store.Config{Nodes: 2, Paused: true})
	clk := s.Clock()
	const ttl = 200 * time.Millisecond
	steady, slewed := s.Nodes()[0], s.Nodes()[1]
	key := s.Key("k")
	for _, n := range []*store.Node{steady, slewed} {
		if err := n.Client.Set(ctx, key, "v", ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	start := clk.Now()
	if err := slewed.SlewClock(ttl, ttl); err != nil {
		t.Fatal(err)
	}
	sawEarly := false
	for clk.Now()-start < ttl+ttl/2 {
		_ = clk.SetSpeed(0.25)
		time.Sleep(5 * time.Millisecond)
		_ = clk.SetSpeed(0)
		v := clk.Now() - start
		ahead, rate := slewed.ClockOffset()
		if v < ttl && (ahead != v || rate != 2) {
			t.Fatalf("at %v: the slewed clock is %v ahead at rate %g; want %v at 2", v, ahead, rate, v)
		}
		has := func(n *store.Node) bool { return n.Client.Exists(ctx, key).Val() == 1 }
		if want := v < ttl; has(steady) != want {
			t.Fatalf("at %v the steady node holds the key: %v, want %v", v, has(steady), want)
		}
		if want := 2*v < ttl; has(slewed) != want {
			t.Fatalf("at %v (the slewed clock at %v) the slewed node holds the key: %v, want %v", v, 2*v, has(slewed), want)
		}
		if !has(slewed) && has(steady) {
			sawEarly = true
		}
	}
	if !sawEarly {
		t.Fatal("never saw the slewed node's key gone while the steady node's held")
	}
	if ahead, rate := slewed.ClockOffset(); ahead != ttl || rate != 1 {
		t.Fatalf("after the slew: %v ahead at rate %g, want %v at 1", ahead, rate, ttl)
	}
}
