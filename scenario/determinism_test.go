package scenario_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// logOf runs cfg on a fresh embedded store and returns every line of its
// event log after the header (the header holds the date).
func logOf(t testing.TB, cfg scenario.Config) []byte {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Nodes: cfg.Params.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events = &buf
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if !r.Simulated() || r.Header.Time != scenario.TimeSimulated {
		t.Fatalf("%s/%s ran in %q, want a simulation", cfg.Scenario, cfg.Strategy, r.Header.Time)
	}
	_, body, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	return body
}

// determinismCases are the runs whose logs must not depend on the host.
func determinismCases() []scenario.Config {
	params := func(name string, mod func(*event.Params)) event.Params {
		sc, _ := scenario.Lookup(name)
		p := sc.Defaults
		if mod != nil {
			mod(&p)
		}
		return p
	}
	return []scenario.Config{
		{Scenario: "ttl-expiry", Strategy: "safe", Seed: 3, Params: params("ttl-expiry", nil)},
		{Scenario: "oversell", Strategy: "none", Seed: 3, Params: params("oversell", func(p *event.Params) { p.Workers = 40 })},
		{Scenario: "redlock", Strategy: "redlock", Seed: 3, Params: params("redlock", func(p *event.Params) { p.Part = "failover" })},
		{Scenario: "renewal", Strategy: "watchdog", Seed: 3, Params: params("renewal", nil)},
		{Scenario: "deadlock", Strategy: "safe", Seed: 3, Params: params("deadlock", nil)},
		{Scenario: "queue-double", Strategy: "heartbeat", Seed: 3, Params: params("queue-double", nil)},
		{Scenario: "retry", Strategy: "full-jitter", Seed: 3, Params: params("retry", nil)},
	}
}

// The same seed gives the same log byte for byte, whatever the host does
// meanwhile: four busy loops beside it, one thread or eight for Go's
// scheduler.
func TestSameSeedSameLogUnderLoad(t *testing.T) {
	cases := determinismCases()
	want := make([][]byte, len(cases))
	for i, cfg := range cases {
		want[i] = logOf(t, cfg)
	}
	stop, err := startBusyN(4)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 8} {
		runtime.GOMAXPROCS(procs)
		for i, cfg := range cases {
			if got := logOf(t, cfg); !bytes.Equal(got, want[i]) {
				t.Errorf("%s/%s seed %d, GOMAXPROCS %d beside 4 busy loops: the log differs from the quiet run's\n%s",
					cfg.Scenario, cfg.Strategy, cfg.Seed, procs, firstDifference(want[i], got))
			}
		}
	}
}

// firstDifference shows the first line where two logs part.
func firstDifference(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  quiet: %s\n  load:  %s", i+2, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one log is longer: %d lines against %d", len(la), len(lb))
}

var updateHistories = flag.Bool("update-histories", false, "rewrite testdata/histories.txt with this build's histories")

const historiesFile = "testdata/histories.txt"

// Every simulated scenario and strategy tells exactly the history its seed
// gave when testdata/histories.txt was written: a change that moves one
// step of any story shows here, with the scenario it moved. After a change
// meant to move them, -update-histories writes the new ones.
func TestHistoriesAreTheSeeds(t *testing.T) {
	// Not beside the real-time stories: its runs are many, and fast.
	var lines []string
	for _, sc := range scenario.Catalogue() {
		if sc.RealTime != "" {
			continue
		}
		for _, strategy := range sc.Strategies {
			if scenario.ServerOf(strategy) != "redis" || scenario.WallClock(strategy) != "" {
				continue
			}
			p := sc.Defaults
			if strategy == "redlock" {
				p.Nodes = max(p.Nodes, 5)
			}
			sum := sha256.Sum256(logOf(t, scenario.Config{Scenario: sc.Name, Strategy: strategy, Seed: 1, Params: p}))
			lines = append(lines, fmt.Sprintf("%s %s 1 %s", sc.Name, strategy, hex.EncodeToString(sum[:8])))
		}
	}
	if *updateHistories {
		if err := os.WriteFile(historiesFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(historiesFile)
	if err != nil {
		t.Fatalf("%v (go test -run HistoriesAreTheSeeds -update-histories ./scenario writes it)", err)
	}
	defer f.Close()
	var want []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		want = append(want, sc.Text())
	}
	for _, l := range lines {
		if !slices.Contains(want, l) {
			t.Errorf("history moved: %s", l)
		}
	}
	if len(want) != len(lines) {
		t.Errorf("%d histories recorded, %d told", len(want), len(lines))
	}
}
