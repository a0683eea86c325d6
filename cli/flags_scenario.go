package cli

import (
	crand "crypto/rand"
	"encoding/binary"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/spawn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// scenarioFlags say what a run does: --lock, the parameters of the one
// table (every one, or the few a command names) and --seed.
type scenarioFlags struct {
	lock  string
	given paramValues // the scenario parameters given as flags
	seed  uint64
	noted bool // the notes on flags a scenario ignores are out
}

// addScenarioFlags registers --lock, the parameters named (every one when
// none is) and --seed.
func addScenarioFlags(fl *pflag.FlagSet, f *scenarioFlags, only ...string) {
	fl.StringVar(&f.lock, "lock", "", "lock strategy (see locklab list); default: the scenario's first")
	addParamFlags(fl, &f.given, only...)
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: a fresh one, shown in the summary)")
}

// strategy is --lock when it is one of sc's, else sc's first.
func (f *scenarioFlags) strategy(sc *scenario.Scenario) (string, error) {
	if f.lock == "" {
		return sc.Strategies[0], nil
	}
	if !sc.Supports(f.lock) {
		return "", usagef("--lock %q is not a strategy of %s: want one of %s", f.lock, sc.Name, sc.StrategyNames())
	}
	return f.lock, nil
}

// params applies the flags the user set over the scenario's defaults; the
// node count is weighed against the servers the run goes to (the Redis
// URLs, or the topology to spawn).
func (f *scenarioFlags) params(cmd *cobra.Command, sc *scenario.Scenario, strategy string, urls []string, topology string) (event.Params, error) {
	p := sc.Defaults
	set := cmd.Flags().Changed
	if !f.noted {
		f.noted = true
		noteIgnored(cmd, sc)
	}
	f.given.apply(&p, set)
	if speed, err := cmd.Flags().GetFloat64("speed"); err == nil && set("speed") && speed != 1 {
		if why := scenario.KeepsOneX(strategy); why != "" {
			return p, usagef("--speed %g: %s (leave out --speed)", speed, why)
		}
	}
	switch {
	case topology != "":
		if n := spawn.TopologyNodes(topology); set("nodes") && f.given.nodes() != n {
			return p, usagef("--nodes %d does not match --topology %s, which has %d node(s)", f.given.nodes(), topology, n)
		}
		p.Nodes = spawn.TopologyNodes(topology)
		if least, _ := quorumOf(strategy); multiNode(strategy) && p.Nodes < least {
			return p, usagef("%s needs at least %d independent Redis nodes for a quorum: use --topology %s", strategy, least, spawn.TopoRedlock)
		}
	case len(urls) > 0:
		if n := f.given.nodes(); set("nodes") && n != len(urls) {
			return p, usagef("--nodes %d does not match the %d --redis URL(s) given", n, len(urls))
		}
		p.Nodes = len(urls)
	case set("nodes"):
		p.Nodes = f.given.nodes()
	case multiNode(strategy):
		_, p.Nodes = quorumOf(strategy)
	}
	if least, def := quorumOf(strategy); multiNode(strategy) && p.Nodes < least {
		if len(urls) > 0 {
			return p, usagef("%s needs at least %d independent Redis nodes for a quorum, got %d URL(s): give --redis once per node, or leave it out for %d embedded nodes", strategy, least, len(urls), def)
		}
		return p, usagef("--nodes %d: %s needs at least %d nodes for a quorum (default %d)", p.Nodes, strategy, least, def)
	}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// seedFlag is --seed when given, else a fresh one (shown in the summary).
func seedFlag(cmd *cobra.Command, given uint64) uint64 {
	if cmd.Flags().Changed("seed") {
		return given
	}
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) % 1_000_000
}
