package scenario_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// netConfig is oversell with network faults planned on three workers'
// links: latency with jitter, a partition, a reply lost to a reset.
func netConfig(seed uint64, faults bool) scenario.Config {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = 8
	cfg := scenario.Config{Scenario: "oversell", Strategy: "safe", Seed: seed, Params: p}
	if faults {
		cfg.Faults = []scenario.Timed{
			{At: 0, Fault: scenario.Fault{Kind: scenario.FaultNet, Worker: 1, Node: 0,
				Net: store.Toxic{Kind: store.ToxicLatency, Dir: store.Both, D: 3e6, Jitter: 2e6}}},
			{At: 0, Fault: scenario.Fault{Kind: scenario.FaultNet, Worker: 2, Node: -1,
				Net: store.Toxic{Kind: store.ToxicPartition, Dir: store.Both}}},
			{At: 0, Fault: scenario.Fault{Kind: scenario.FaultNet, Worker: 3, Node: 0, D: 40e6,
				Net: store.Toxic{Kind: store.ToxicReset, Dir: store.Down}}},
		}
	}
	return cfg
}

// The same seed and the same network faults give the same log, byte for
// byte; the faults are on it, and they change what happens.
func TestSimulatedNetworkFaultsAreDeterministic(t *testing.T) {
	t.Parallel()
	a, b := netLogOf(t, netConfig(7, true)), netLogOf(t, netConfig(7, true))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with seed 7 and the same network faults wrote different logs")
	}
	if bytes.Equal(a, netLogOf(t, netConfig(7, false))) {
		t.Fatal("the network faults changed nothing in the log")
	}
	log := string(a)
	for _, want := range []string{
		`"code":"net","msg":"network #1 on: latency 3ms±2ms both · w01 ⇄ node 0"`,
		`"code":"net","msg":"network #2 on: partition · w02 ⇄ node 0"`,
		`"code":"net","msg":"network #3 on: reset down · w03 ⇄ node 0 · for 40ms"`,
		`"worker":2,"kind":"error","res":"lock:stock","attempt":1,"outcome":"failed","code":"acquire","msg":"dial tcp: connection refused"`,
		`"worker":3,"kind":"error","res":"lock:stock","attempt":1,"outcome":"indeterminate","code":"acquire","msg":"read tcp: connection reset by peer"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	// w01's acquire crossed 3ms±2ms each way: it came back at least 2ms later.
	if !strings.Contains(log, `"worker":1,"kind":"denied"`) && !strings.Contains(log, `"worker":1,"kind":"acquired"`) {
		t.Error("w01's acquire never came back")
	}
}

// netLogOf is logOf for a run whose faults may leave operations broken:
// the run then ends with the server's error, and its log is still whole.
func netLogOf(t *testing.T, cfg scenario.Config) []byte {
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
	var se *scenario.ServerError
	if err := r.Wait(); err != nil && !errors.As(err, &se) {
		t.Fatal(err)
	}
	if !r.Simulated() {
		t.Fatal("the run was not simulated")
	}
	if cfg.Faults != nil && !strings.Contains(r.Summary().Detail, "Network faults were put on the workers' links (network #1 on: latency") {
		t.Errorf("the summary does not name the network faults: %s", r.Summary().Detail)
	}
	_, body, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	return body
}
