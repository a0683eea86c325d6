package workshop

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// calls is how many times the server has run cmd since its stats were
// reset.
func calls(t *testing.T, rc *redis.Client, cmd string) int64 {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestJoinersShareOneWatch: the joiners of one process that share a Watch
// (a host's participants over SSH) read the room once per poll between
// them, not once each, and measure the server's clock once per round; each
// still races the round under its own name, as a join process does.
func TestJoinersShareOneWatch(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock = 2
	h, err := OpenHost(ctx, HostConfig{URL: srv.URL, Room: "watch", Scenario: "oversell", Strategy: "safe", Params: p,
		Seed: 1, Lead: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	opt, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	w := NewWatch(ctx, srv.URL, "watch", 10*time.Millisecond)
	const joiners = 6
	outs := make([]*syncBuffer, joiners)
	errs := make(chan error, joiners)
	for i := range outs {
		outs[i] = &syncBuffer{}
		go func() {
			errs <- Join(ctx, JoinConfig{URL: srv.URL, Room: "watch", Name: fmt.Sprintf("p%d", i), Workers: 1, Out: outs[i], Watch: w, Rounds: 1})
		}()
	}
	waitLobby(t, h, joiners)
	for _, out := range outs { // each has looked at the room once
		for !strings.Contains(out.String(), "waiting for the host to open a round") && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	from := w.Polls()
	if from == 0 {
		t.Fatal("the joiners have looked at the room and none asked the watch")
	}
	for w.Polls() < from+10 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	read := calls(t, rc, "exists") // each poll asks whether the host is there
	if polls := w.Polls() - from; read > polls+1 {
		t.Errorf("%d joiners read the room %d times in %d polls: each read it on its own", joiners, read, polls)
	}
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for range joiners {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, out := range outs {
		if !strings.Contains(out.String(), fmt.Sprintf("round 1: p%d's 1 worker(s): buys", i)) {
			t.Errorf("p%d did not race round 1:\n%s", i, out)
		}
	}
	if n := calls(t, rc, "time"); n >= joiners*syncSamples {
		t.Errorf("%d clock readings for %d joiners: each measured the clock on its own", n, joiners)
	}
}
