package sim_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/sim"
)

// race is a toy run: n actors that each sleep a little, append to a shared
// trace, and wait for each other through the clock's group and channels.
func race(seed uint64, n int) []string {
	c := clock.NewClock(1)
	rt := sim.New(seed, nil)
	c.Simulate(rt)
	var mu sync.Mutex
	var trace []string
	note := func(format string, a ...any) {
		mu.Lock()
		trace = append(trace, fmt.Sprintf("%v ", c.Now())+fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	ctx := sim.Within(context.Background(), rt)
	rt.Start(ctx, "main", func(ctx context.Context) {
		g := clock.NewGroup(c)
		ready := make(chan int, n)
		for i := range n {
			g.Go(ctx, fmt.Sprintf("a%d", i), func(ctx context.Context) {
				for step := range 3 {
					_ = c.Sleep(ctx, time.Duration(1+(i+step)%3)*time.Millisecond)
					note("a%d step %d", i, step)
				}
				ready <- i
			})
		}
		for range n {
			v, _ := clock.Recv(c, ctx, ready)
			note("main heard a%d", v)
		}
		g.Wait(ctx)
	})
	<-rt.Done()
	return trace
}

// The same seed gives the same trace, whatever Go's scheduler does; other
// seeds give other interleavings of the same instants.
func TestSameSeedSameTrace(t *testing.T) {
	want := strings.Join(race(7, 8), "\n")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for range 5 {
			if got := strings.Join(race(7, 8), "\n"); got != want {
				t.Fatalf("GOMAXPROCS %d: the trace differs:\n%s\nwant:\n%s", procs, got, want)
			}
		}
	}
	differ := false
	for seed := range uint64(20) {
		if strings.Join(race(seed, 8), "\n") != want {
			differ = true
			break
		}
	}
	if !differ {
		t.Error("twenty seeds all gave seed 7's interleaving: the seed picks nothing")
	}
}

// Time jumps from timer to timer: a run of virtual seconds takes none.
func TestTimeJumpsToTheNextTimer(t *testing.T) {
	c := clock.NewClock(1)
	rt := sim.New(1, nil)
	c.Simulate(rt)
	var woke []time.Duration
	start := time.Now()
	rt.Start(sim.Within(context.Background(), rt), "sleeper", func(ctx context.Context) {
		for _, d := range []time.Duration{time.Hour, time.Second, 0, time.Millisecond} {
			_ = c.Sleep(ctx, d)
			woke = append(woke, c.Now())
		}
	})
	<-rt.Done()
	want := []time.Duration{time.Hour, time.Hour + time.Second, time.Hour + time.Second, time.Hour + time.Second + time.Millisecond}
	if fmt.Sprint(woke) != fmt.Sprint(want) {
		t.Fatalf("woke at %v, want %v", woke, want)
	}
	if real := time.Since(start); real > 5*time.Second {
		t.Fatalf("an hour of virtual time took %v of real time", real)
	}
}

// An actor that waits for what never comes ends the run with an error
// naming it, instead of hanging.
func TestStuckRunNamesTheWaiters(t *testing.T) {
	c := clock.NewClock(1)
	rt := sim.New(1, nil)
	c.Simulate(rt)
	ctx, cancel := c.WithCancel(sim.Within(context.Background(), rt))
	defer cancel()
	var stuck error
	rt.OnStuck(func(err error) { stuck = err; cancel() })
	never := make(chan struct{})
	rt.Start(ctx, "main", func(ctx context.Context) {
		g := clock.NewGroup(c)
		g.Go(ctx, "w07", func(ctx context.Context) { _, _ = clock.Recv(c, ctx, (<-chan struct{})(never)) })
		_ = c.Sleep(ctx, time.Second)
		g.Wait(ctx)
	})
	select {
	case <-rt.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck run did not end")
	}
	if stuck == nil || !strings.Contains(stuck.Error(), "w07") || !strings.Contains(stuck.Error(), "main") {
		t.Fatalf("stuck: %v; want an error naming w07 and main", stuck)
	}
	if rt.Err() == nil {
		t.Error("the runtime does not say why it ended the run")
	}
}

// A cancelled context wakes an actor asleep on it at once, not when its
// timer would have fired; a simulated timeout fires at its instant.
func TestCancelAndTimeoutWakeSleepers(t *testing.T) {
	c := clock.NewClock(1)
	rt := sim.New(1, nil)
	c.Simulate(rt)
	var slept, timedOut time.Duration
	var err error
	rt.Start(sim.Within(context.Background(), rt), "main", func(ctx context.Context) {
		wctx, stop := c.WithCancel(ctx)
		g := clock.NewGroup(c)
		g.Go(wctx, "sleeper", func(ctx context.Context) {
			err = c.Sleep(ctx, time.Hour)
			slept = c.Now()
		})
		_ = c.Sleep(ctx, time.Second)
		stop()
		g.Wait(ctx)
		tctx, cancel := c.WithTimeout(ctx, 250*time.Millisecond)
		defer cancel()
		_ = c.Sleep(tctx, time.Hour)
		timedOut = c.Now()
		if !clock.TimedOut(tctx) {
			timedOut = -1
		}
	})
	<-rt.Done()
	if slept != time.Second || err == nil {
		t.Errorf("the cancelled sleeper woke at %v (%v), want at 1s with an error", slept, err)
	}
	if timedOut != time.Second+250*time.Millisecond {
		t.Errorf("the timeout fired at %v, want 1.25s", timedOut)
	}
}

// An input from outside the run lands between two steps, at the simulated
// time then; a paced run does not outrun its clock.
func TestInputsAndPace(t *testing.T) {
	c := clock.NewClock(1)
	rt := sim.New(1, c)
	c.Simulate(rt)
	done := make(chan time.Duration, 1)
	start := time.Now()
	rt.Start(sim.Within(context.Background(), rt), "main", func(ctx context.Context) {
		_ = c.Sleep(ctx, 300*time.Millisecond)
	})
	time.Sleep(50 * time.Millisecond)
	rt.Do(func() { done <- c.Now() })
	at := <-done
	<-rt.Done()
	if at <= 0 || at >= 300*time.Millisecond {
		t.Errorf("the input landed at %v, want within the paced sleep", at)
	}
	if real := time.Since(start); real < 250*time.Millisecond {
		t.Errorf("300ms at 1× took %v of real time: the pace was not kept", real)
	}
}
