package scenario_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/locklab/locklab/lock/all" // every strategy the catalogue names

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/store/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(spinEnv) != "" {
		spin()
	}
	storetest.QuietRedis()
	storetest.WidenParallel(parallelTests)
	measureOutsideLoad()
	stop, err := startBusy()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	stop()
	storetest.StopShared()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction(spawn.SpawnerLoop)); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// run runs a scenario to the end on a fresh store and returns the run.
func run(t testing.TB, urls []string, cfg scenario.Config) *scenario.Run {
	return runAt(t, urls, 1, cfg)
}

// runAt is run with the embedded clock at speed.
func runAt(t testing.TB, urls []string, speed float64, cfg scenario.Config) *scenario.Run {
	t.Helper()
	speed = realTimeSpeed(urls, speed, cfg)
	slowmo := 1.0
	if len(urls) > 0 && speed < 1 {
		slowmo = 1 / speed // a real server keeps real time: slow the run down instead
	}
	st, err := store.Open(context.Background(), store.Config{URLs: urls, Nodes: cfg.Params.Nodes, PoolSize: 64, Speed: speed, Slowmo: slowmo, ConnectTimeout: testConnectTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		unansweredOnARealServer(t, urls, err)
		t.Fatal(err)
	}
	return r
}

// unansweredOnARealServer skips a real-time story on a real server that a
// busy machine left with an operation unanswered: the run rightly says
// its end is unknown, and there is no story left to assert. (The same
// story is asserted in simulation, where no load reaches it.)
func unansweredOnARealServer(t testing.TB, urls []string, err error) {
	t.Helper()
	var se *scenario.ServerError
	if len(urls) > 0 && errors.As(err, &se) && se.Failed == 0 && se.Unanswered > 0 {
		t.Skipf("the machine left an operation unanswered on the real server: %v", err)
	}
}

func oversellParams(mod func(*event.Params)) event.Params {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	if mod != nil {
		mod(&p)
	}
	return p
}

// stores yields the embedded store (nil URLs) and, with LOCKLAB_DEEP=1, a
// real redis-server with nodes servers.
func stores(t *testing.T, nodes int, f func(t *testing.T, urls []string)) {
	t.Run("embedded", func(t *testing.T) { f(t, nil) })
	t.Run("redis-server", func(t *testing.T) {
		realTimeStory(t)
		f(t, storetest.URLs(storetest.StartN(t, nodes)))
	})
}

// deep reports whether the deep pass runs (LOCKLAB_DEEP=1, as CI runs it).
func deep() bool { return os.Getenv("LOCKLAB_DEEP") == "1" }

// realTimeStory skips a story told again in real time on a real
// redis-server unless the deep pass runs: such a story lasts as long as
// its TTLs and pauses, and the simulated telling of it runs every time.
// Under the race detector it is skipped too.
func realTimeStory(t *testing.T) {
	t.Helper()
	skipRealTimeUnderRace(t)
	if !deep() {
		t.Skip("a real-time story on a real redis-server: runs with LOCKLAB_DEEP=1")
	}
}

// skipRealTimeUnderRace skips a story kept in real time under the race
// detector, whose slowdown (5–10×) turns its margins into time-outs: it
// runs without -race. A simulated story runs under it, as under any load.
func skipRealTimeUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a real-time story: run without -race")
	}
}

// seeds is how many seeds a property test runs: n, a tenth of it under
// -short, and deepSeeds times it with LOCKLAB_DEEP=1 (as CI runs it).
func seeds(t testing.TB, n int) int {
	switch {
	case testing.Short():
		return max(n/10, 1)
	case deep():
		return n * deepSeeds
	}
	return n
}

// serverSeeds is how many seeds a property test runs on a real server,
// in real time: a twentieth of n (a smoke test of each strategy on its
// server: every run's workers are new connections, and a Postgres
// connection is a process), and deepSeeds times n in the deep pass, which
// CI runs beside.
func serverSeeds(t testing.TB, n int) int {
	if deep() || testing.Short() {
		return seeds(t, n)
	}
	return max(n/20, 1)
}

// deepSeeds multiplies every property test's seeds under LOCKLAB_DEEP=1.
const deepSeeds = 5

func TestNoLockOversells(t *testing.T) {
	t.Parallel()
	stores(t, 1, func(t *testing.T, urls []string) {
		n := seeds(t, 100)
		oversold := 0
		// A read-to-write window of 100ms: wide enough that a busy machine
		// cannot serialise 50 workers through it by chance.
		runs := runAllBy(t, urls, 1, n, busyRuns, func(seed int) scenario.Config {
			return scenario.Config{Scenario: "oversell", Strategy: "none", Seed: uint64(seed),
				Params: oversellParams(func(p *event.Params) { p.Workers, p.Stock, p.Delay = 50, 1, event.Millis(100*time.Millisecond) })}
		})
		for seed, r := range runs {
			s := r.Summary()
			if s.Oversold && s.Successes > 1 && strings.HasPrefix(s.Verdict, "OVERSOLD") {
				oversold++
			} else {
				t.Logf("seed %d: %s", seed, s.Verdict)
			}
			if s.FinalStock < 0 {
				t.Fatalf("seed %d: stock went negative (%d): a check-then-write never can", seed, s.FinalStock)
			}
		}
		if oversold*100 < 95*n {
			t.Fatalf("oversold in %d of %d seeds, want at least 95%%", oversold, n)
		}
		t.Logf("oversold in %d of %d seeds", oversold, n)
	})
}

// TestLocksNeverOversell runs before the package's stories, not beside
// them: its runs retry busily, and the stories that count real time (a
// Redlock vote, a dead Postgres session) must not wait behind them.
func TestLocksNeverOversell(t *testing.T) {
	for _, strategy := range []string{"safe", "fenced", "watchdog", "redlock", "atomic"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			nodes := 1
			if strategy == "redlock" {
				nodes = 5
			}
			stores(t, nodes, func(t *testing.T, urls []string) {
				// The TTL is a safety net this test does not measure (the
				// work inside takes 5ms): 20s (4s of real time at 5×), so
				// that no stall of a busy machine lets a lock lapse under
				// its holder.
				// Redlock's runs cost the most (five servers, each vote a
				// Lua script): fewer of them.
				// The plain pass looks at half the seeds the deep pass's
				// hundred are a fifth of.
				n := seeds(t, 100)
				if strategy == "redlock" {
					n = seeds(t, 30)
				}
				if !deep() {
					n = max(n/2, 1)
				}
				runs := runAllBy(t, urls, 5, n, 4, func(seed int) scenario.Config {
					return scenario.Config{Scenario: "oversell", Strategy: strategy, Seed: uint64(seed),
						Params: oversellParams(func(p *event.Params) {
							p.Workers, p.Stock, p.Nodes, p.TTL = 20, 3, nodes, event.Millis(20*time.Second)
							p.Retry, p.RetryBase, p.MaxRetries = "full-jitter", event.Millis(5*time.Millisecond), 100
						})}
				})
				for seed, r := range runs {
					s := r.Summary()
					if s.Oversold || s.Overlaps != 0 || s.LostUpdates != 0 || s.Violations != 0 {
						t.Fatalf("seed %d: %s (overlaps %d, lost %d)", seed, s.Verdict, s.Overlaps, s.LostUpdates)
					}
					if s.Successes != 3 || s.FinalStock != 0 {
						t.Fatalf("seed %d: sold %d, final stock %d; want exactly 3 sold and 0 left", seed, s.Successes, s.FinalStock)
					}
					if _, vs := check.Check(r.Log); len(vs) != 0 {
						t.Fatalf("seed %d: checker re-fold found %d violations", seed, len(vs))
					}
				}
			})
		})
	}
}

func TestSafeWithJitterSellsExactlyTheStock(t *testing.T) {
	t.Parallel()
	stores(t, 1, func(t *testing.T, urls []string) {
		r := run(t, urls, scenario.Config{Scenario: "oversell", Strategy: "safe", Seed: 1,
			Params: oversellParams(func(p *event.Params) { p.Workers, p.Stock, p.Retry = 50, 5, "full-jitter" })})
		s := r.Summary()
		if s.Successes != 5 || s.FinalStock != 0 || s.Verdict != "CORRECT" {
			t.Fatalf("sold %d, final %d, verdict %s", s.Successes, s.FinalStock, s.Verdict)
		}
	})
}

func TestSafeWithoutRetryUndersells(t *testing.T) {
	r := run(t, nil, scenario.Config{Scenario: "oversell", Strategy: "safe", Seed: 1,
		Params: oversellParams(func(p *event.Params) { p.Workers, p.Stock = 5, 3 })})
	s := r.Summary()
	if s.Successes >= 3 || !strings.Contains(s.Verdict, "UNDERSOLD") {
		t.Fatalf("sold %d of 3 without retry: %s", s.Successes, s.Verdict)
	}
}

func TestEventLogRoundTrip(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"none", "fenced", "redlock"} {
		var buf bytes.Buffer
		r := run(t, nil, scenario.Config{Scenario: "oversell", Strategy: strategy, Seed: 42, Events: &buf,
			Params: oversellParams(func(p *event.Params) { p.Nodes = 3; p.Retry = "equal-jitter"; p.Stock = 2 })})
		live := r.Summary().Box(r.Header)
		rec, err := check.ReadRecording(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Events) != r.Log.Len() {
			t.Fatalf("%s: read %d events, logged %d", strategy, len(rec.Events), r.Log.Len())
		}
		if replayed := scenario.Summarize(rec.Header, check.Slice(rec.Events)).Box(rec.Header); replayed != live {
			t.Fatalf("%s: summary differs after reading back:\nlive:\n%s\nreplayed:\n%s", strategy, live, replayed)
		}
		if rec.Summary == nil || rec.Summary.Verdict != r.Summary().Verdict {
			t.Fatalf("%s: summary line missing or different", strategy)
		}
		_, live2 := check.Check(r.Log)
		_, again := check.Check(check.Slice(rec.Events))
		if len(live2) != len(again) {
			t.Fatalf("%s: checker found %d violations live, %d on the recording", strategy, len(live2), len(again))
		}
	}
}

func TestRunLeavesOtherKeysAlone(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	c := srv.Client(t)
	for i := range 1000 {
		if i%10 == 0 {
			c.Set(ctx, "user:"+itoa(i), "v"+itoa(i), time.Hour)
		} else {
			c.Set(ctx, "user:"+itoa(i), "v"+itoa(i), 0)
		}
	}
	c.Set(ctx, "locklab:someone-else:stock", "7", 0) // another run's key: not ours to touch
	before := dump(t, c)
	for _, strategy := range []string{"none", "naive", "safe", "fenced", "watchdog", "atomic"} {
		run(t, []string{srv.URL}, scenario.Config{Scenario: "oversell", Strategy: strategy, Seed: 1,
			Params: oversellParams(func(p *event.Params) {
				p.Stock = 3
				p.Retry = "fixed"
				p.RetryBase = event.Millis(time.Millisecond)
			})})
	}
	after := dump(t, c)
	if len(before) != len(after) {
		t.Fatalf("%d keys before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("key %s changed: %q → %q", k, v, after[k])
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
