package bench_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/locklab/locklab/lock/all" // the strategies beyond Redis

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// short runs a short bench of every strategy the store can run.
func short(t *testing.T, st *store.Store) (*bench.Report, []string, []bench.LeftOut) {
	t.Helper()
	run, left := bench.Plan(st, nil)
	rep, err := bench.Run(context.Background(), bench.Config{Store: st, Strategies: run,
		Workers: []int{1, 3}, Duration: 20 * time.Millisecond, Warmup: 5 * time.Millisecond, Rounds: 2, AutoPipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	rep.LeftOut = append(left, rep.LeftOut...)
	return rep, run, left
}

func open(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestBenchEmbedded(t *testing.T) {
	t.Parallel()
	st := open(t, store.Config{Nodes: 5})
	rep, run, left := short(t, st)
	for _, want := range []string{"safe", "fenced", "redlock", "flock", "redis-optimistic"} {
		if !slices.Contains(run, want) {
			t.Errorf("the embedded store does not run %s: planned %v, left out %v", want, run, left)
		}
	}
	checkReport(t, rep, run)
	for _, l := range left {
		if info, _ := lock.Lookup(l.Strategy); !strings.Contains(l.Reason, "--"+string(info.Server)) {
			t.Errorf("%s left out with %q: does not say what to pass", l.Strategy, l.Reason)
		}
	}
}

func TestBenchRedisServer(t *testing.T) {
	t.Parallel()
	srvs := storetest.StartN(t, 3)
	st := open(t, store.Config{URLs: storetest.URLs(srvs), PoolSize: 16})
	rep, run, _ := short(t, st)
	if !slices.Contains(run, "redlock") {
		t.Errorf("three redis-servers do not run redlock: planned %v", run)
	}
	checkReport(t, rep, run)
}

func TestBenchLeavesRedlockOutOnOneNode(t *testing.T) {
	t.Parallel()
	st := open(t, store.Config{Nodes: 1})
	run, left := bench.Plan(st, []string{"safe", "redlock"})
	if !slices.Equal(run, []string{"safe"}) || len(left) != 1 || !strings.Contains(left[0].Reason, "--redis once per node") {
		t.Errorf("one node: run %v, left out %v; want redlock left out, saying to give --redis once per node", run, left)
	}
}

// checkReport checks the report's JSON shape, and that every planned
// strategy is in it with a cell per concurrency and no failure.
func checkReport(t *testing.T, rep *bench.Report, run []string) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format     string            `json:"format"`
		Version    int               `json:"version"`
		Store      string            `json:"store"`
		DurationMS *int64            `json:"duration_ms"`
		Rounds     int               `json:"rounds"`
		Workers    []int             `json:"workers"`
		Env        map[string]any    `json:"env"`
		Ceilings   []map[string]any  `json:"ceilings"`
		Results    []map[string]any  `json:"results"`
		AP         []json.RawMessage `json:"autopipeline"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "locklab-bench" || doc.Version != 2 || doc.Store == "" || doc.DurationMS == nil || doc.Rounds != 2 || !slices.Equal(doc.Workers, []int{1, 3}) {
		t.Errorf("header: %s", b[:min(len(b), 200)])
	}
	for _, k := range []string{"go", "os", "cpu", "cores", "load_average_start", "load_average_end", "start", "end", "servers"} {
		if _, ok := doc.Env[k]; !ok {
			t.Errorf("env has no %q: %v", k, doc.Env)
		}
	}
	cellKeys := []string{"workers", "rounds", "cycles", "per_sec", "per_sec_min", "per_sec_max", "acquire_p50_us", "acquire_p99_us", "acquire_p999_us"}
	seen := map[string]bool{}
	for _, s := range doc.Ceilings {
		name, _ := s["strategy"].(string)
		seen[name] = true
	}
	for _, s := range doc.Results {
		name, _ := s["strategy"].(string)
		seen[name] = true
		if _, ok := s["server"].(string); !ok {
			t.Errorf("%s has no server", name)
		}
		cells, _ := s["cells"].([]any)
		if len(cells) != 2 {
			t.Errorf("%s has %d cells, want one per concurrency (2)", name, len(cells))
		}
		for _, c := range cells {
			cell, _ := c.(map[string]any)
			for _, k := range cellKeys {
				if _, ok := cell[k].(float64); !ok {
					t.Errorf("%s: a cell has no number %q: %v", name, k, cell)
				}
			}
			if samples, _ := cell["samples"].([]any); len(samples) != 2 {
				t.Errorf("%s: %d raw samples, want one per round (2)", name, len(samples))
			}
			// A lock with a server round trip has its ceiling and ratio.
			if info, _ := lock.Lookup(strings.TrimSuffix(name, bench.AutoPipelined)); info.Server != lock.ServerFile && info.Server != lock.ServerIPC {
				if _, ok := cell["ratio_to_ceiling"].(float64); !ok || cell["ceiling"] == nil {
					t.Errorf("%s: a cell has no ceiling or ratio: %v", name, cell)
				}
			}
			// Redlock's votes count only in time: a busy machine may fail
			// one, which the cell then reports.
			if e, ok := cell["error"]; ok && !strings.HasPrefix(name, "redlock") {
				t.Errorf("%s at %v workers failed: %v", name, cell["workers"], e)
			}
		}
	}
	if !seen["redis SET"] || !seen["redis SET"+bench.AutoPipelined] {
		t.Errorf("no redis SET ceiling, plain and AutoPipelined: %v", seen)
	}
	for _, s := range run {
		if !seen[s] {
			t.Errorf("strategy %s planned but not in the report", s)
		}
		if slices.ContainsFunc(lock.Strategies, func(r struct{ Name, Doc string }) bool { return r.Name == s }) && !seen[s+bench.AutoPipelined] {
			t.Errorf("Redis-key strategy %s has no AutoPipeline variant", s)
		}
	}
	if want := len(doc.Results) - len(run); len(doc.AP) != want {
		t.Errorf("%d AutoPipeline comparisons, want %d (each variant)", len(doc.AP), want)
	}
	var text strings.Builder
	rep.WriteText(&text)
	plot := rep.Plot(72, 16)
	for _, s := range run {
		if !strings.Contains(text.String(), s) || !strings.Contains(plot, " "+s) {
			t.Errorf("%s missing from the table or the plot's legend", s)
		}
	}
}

// The safety tests end for the libraries too: a paused holder resumes
// before it releases, so a library whose release waits for its own
// renewals (rueidislock) is not left waiting on the pause; each library
// gets a second holder once the paused one's TTL lapses.
func TestSafetyOfTheLibrariesEnds(t *testing.T) {
	t.Parallel()
	st := open(t, store.Config{})
	libs := []string{"redislock", "redsync", "rueidislock"}
	done := make(chan *bench.Report, 1)
	go func() {
		rep, err := bench.Run(context.Background(), bench.Config{Store: st, Strategies: libs,
			Workers: []int{1}, Duration: 10 * time.Millisecond, Warmup: time.Millisecond, Rounds: 1, SafetyTTL: time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	var rep *bench.Report
	select { // minutes are a hang, not a budget
	case rep = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the safety tests of the libraries never ended")
	}
	if rep == nil {
		return
	}
	for _, name := range libs {
		i := slices.IndexFunc(rep.Safety, func(s bench.Safety) bool { return s.Strategy == name })
		if i < 0 {
			t.Errorf("%s: no safety result (left out: %v)", name, rep.LeftOut)
			continue
		}
		switch s := rep.Safety[i]; {
		case s.Error != "": // a loaded machine's timeout: the report says it, and the test ended
			t.Logf("%s: the safety test failed and said why: %s", name, s.Error)
		case s.SecondHolderMS < 0:
			t.Errorf("%s: no second holder after the paused one's TTL: %+v", name, s)
		}
	}
}
