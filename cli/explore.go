package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exploreFlags are explore's: what to run, the faults of every seed's
// run, and the sweep's own. Every seed runs on the embedded store's
// simulation, so no store or pace flags.
type exploreFlags struct {
	scenarioFlags
	scheduleFlags
	seeds int
	jobs  int
	out   string
	json  bool
}

// maxSeeds bounds one sweep: ten million seeds is hours already.
const maxSeeds = 10_000_000

func newExploreCmd() *cobra.Command {
	f := &exploreFlags{}
	cmd := &cobra.Command{
		Use:   "explore SCENARIO",
		Short: "Sweep many seeds of a simulated run; shrink each way the lock breaks to its shortest schedule",
		Example: "  locklab explore oversell --lock naive --workers 10 --stock 5 --retry full-jitter --ttl 5ms\n" +
			"  locklab explore ttl-expiry --lock safe --seeds 200 --out found\n" +
			"  locklab explore oversell --lock redlock --faults pause:w00@1ms+20ms --ttl 10ms --json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("explore needs one scenario: locklab explore SCENARIO --lock X (one of %s)", scenario.Names())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.explore(cmd, args[0]) },
	}
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags)
	for _, n := range simulationOnly {
		refuseFlag(cmd, n, fmt.Sprintf("explore is simulation-only, every seed runs on the embedded store's deterministic simulation (run takes --%s)", n))
	}
	fl.IntVar(&f.seeds, "seeds", 1000, "how many seeds to run, from --seed on (default seed 1)")
	fl.StringVar(&f.faults, "faults", "", "faults planned in every seed's run: "+schedule.SpecHelp)
	fl.IntVar(&f.jobs, "jobs", 0, "runs at a time (default: one per core)")
	fl.StringVar(&f.out, "out", "locklab-explore", "directory for the shrunk failures' schedules and event logs")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON")
	return cmd
}

// simulationOnly are run's flags that explore has not: each names a real
// server or real time.
var simulationOnly = []string{"redis", "topology", "slowmo", "realtime", "speed", "events", "postgres", "mysql", "memcached", "etcd", "etcd-members"}

func (f *exploreFlags) explore(cmd *cobra.Command, name string) error {
	switch {
	case f.seeds < 1 || f.seeds > maxSeeds:
		return usagef("--seeds must be from 1 to %d (got %d)", maxSeeds, f.seeds)
	case cmd.Flags().Changed("jobs") && (f.jobs < 1 || f.jobs > 1024):
		return usagef("--jobs must be from 1 to 1024 (got %d)", f.jobs)
	}
	if fi, err := os.Stat(f.out); err == nil && !fi.IsDir() {
		return usagef("--out %s is a file: explore writes its findings into a directory", f.out)
	}
	if f.jobs == 0 {
		f.jobs = runtime.GOMAXPROCS(0)
	}
	if os.Getenv("GOGC") == "" {
		// Each seed's run is garbage as soon as it is counted: collecting
		// less often saves a third of a sweep's time, for a heap that
		// stays a few MB per job.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	base, err := f.config(cmd, name)
	if err != nil {
		return err
	}
	first := uint64(1)
	if cmd.Flags().Changed("seed") {
		first = f.seed
	}
	ctx := cmd.Context()
	// A sweep cannot start on a strategy that keeps real time.
	probe := base
	probe.Seed = first
	if _, err := explore.Run(ctx, probe, nil); err != nil {
		return exploreError(ctx, err)
	}
	bar := newProgress(cmd.ErrOrStderr(), f.seeds)
	start := time.Now()
	res, err := explore.Sweep(ctx, base, first, f.seeds, f.jobs, bar.update)
	elapsed := time.Since(start)
	bar.clear()
	if err != nil && !errors.Is(err, context.Canceled) {
		return exploreError(ctx, err)
	}
	rep := newExploreReport(base, res, elapsed, f.jobs)
	rep.args = runArgs(cmd)
	if !f.json {
		printSweep(cmd.OutOrStdout(), rep, res)
	}
	if err := f.shrinkAll(ctx, cmd, base, res, rep); err != nil {
		return err
	}
	if f.json {
		if err := rep.write(cmd.OutOrStdout()); err != nil {
			return runtimeError{err}
		}
	}
	return rep.exit(ctx)
}

// config is the run every seed makes: run's parameters, and the faults.
func (f *exploreFlags) config(cmd *cobra.Command, name string) (scenario.Config, error) {
	sc, err := scenario.Lookup(name)
	if err != nil {
		return scenario.Config{}, usageError{err}
	}
	strategy, err := f.strategy(sc)
	if err != nil {
		return scenario.Config{}, err
	}
	why := ""
	switch {
	case sc.RealTime != "" || scenario.ServerOf(strategy) != string(lock.ServerRedis):
		why = "its server, or its workers, keep their own"
	case scenario.WallClock(strategy) != "":
		why = "its library reads the wall clock: its deadlines and validity"
	}
	if why != "" {
		return scenario.Config{}, usagef("explore is simulation-only: %s with %s keeps real time (%s), so its seeds do not fix its interleavings", sc.Name, strategy, why)
	}
	p, err := f.params(cmd, sc, strategy, nil, "")
	if err != nil {
		return scenario.Config{}, err
	}
	cfg := scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Tool: "locklab " + version}
	if cmd.Flags().Changed("faults") {
		if cfg.Faults, err = schedule.ParseFaults(f.faults, p); err != nil {
			return cfg, usagef("--faults: %v", err)
		}
	}
	return cfg, nil
}

// exploreError is a run that could not be explored: a strategy that keeps
// real time is a usage error, an interruption says so.
func exploreError(ctx context.Context, err error) error {
	switch {
	case explore.IsRealTime(err):
		return usageError{err}
	case ctx.Err() != nil:
		return runtimeError{errors.New("interrupted before the first seed ended")}
	}
	var pe *event.ParamError
	if errors.As(err, &pe) {
		return usageError{err}
	}
	return runtimeError{err}
}

// shrinkAll shrinks the first seed of each violation and writes its
// schedule and event log to --out.
func (f *exploreFlags) shrinkAll(ctx context.Context, cmd *cobra.Command, base scenario.Config, res *explore.Result, rep *exploreReport) error {
	rows := res.Violations()
	if len(rows) == 0 {
		return nil
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return usagef("--out %s: %v", f.out, err)
	}
	out := cmd.OutOrStdout()
	for _, row := range rows {
		cfg := base
		cfg.Seed = row.First.Seed
		if !f.json && ctx.Err() == nil {
			fmt.Fprintf(out, "\n  %s: shrinking seed %d (%s) …\n", row.Class, cfg.Seed, sizeWords(row.First))
		}
		// Interrupted before or while shrinking, the case so far is kept:
		// at worst the first seed that broke, as the sweep ran it.
		s := explore.Shrunk{Config: cfg, Outcome: row.First}
		if ctx.Err() == nil {
			got, err := explore.Shrink(ctx, cfg, row.Class, explore.Options{Jobs: f.jobs, Share: float64(row.Count) / float64(max(res.Done, 1))})
			if err != nil && ctx.Err() == nil {
				return runtimeError{err}
			}
			if got.Outcome.Class == row.Class {
				s = got
			}
		}
		found, err := writeFound(f.out, s)
		if err != nil {
			return err
		}
		found.Interrupted = ctx.Err() != nil
		rep.Shrunk = append(rep.Shrunk, found)
		if !f.json {
			printFound(out, found)
		}
	}
	return nil
}

// writeFound writes a shrunk case's schedule and, run once more, its
// event log: the replay the schedule makes.
func writeFound(dir string, s explore.Shrunk) (exploreFound, error) {
	slug := explore.Slug(s.Outcome.Class)
	found := exploreFound{Verdict: s.Outcome.Verdict, Class: s.Outcome.Class, Seed: s.Config.Seed,
		Workers: s.Outcome.Workers, Events: s.Outcome.Events, Steps: s.Outcome.Steps, Faults: len(s.Config.Faults),
		Trials: s.Trials, Scenario: s.Config.Scenario, Params: s.Config.Params,
		Schedule: filepath.Join(dir, slug+".schedule"), Log: filepath.Join(dir, slug+".jsonl")}
	if err := writeOutput("out", found.Schedule, "schedule", schedule.Of(s.Config).Write); err != nil {
		return found, err
	}
	// The log is written even after Ctrl-C: one short run more.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := writeOutput("out", found.Log, "event log", func(w io.Writer) error {
		_, err := explore.Run(ctx, s.Config, w)
		return err
	})
	return found, err
}

// runArgs are the flags that set the run, as given: the sweep's title.
func runArgs(cmd *cobra.Command) string {
	var out []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "seeds", "jobs", "out", "json", "seed", "lock":
			return
		}
		out = append(out, "--"+fl.Name+" "+fl.Value.String())
	})
	return strings.Join(out, " ")
}
