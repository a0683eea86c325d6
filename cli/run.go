package cli

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type runFlags struct {
	realtime   bool
	lock       string
	given      paramValues // the scenario parameters given as flags
	seed       uint64
	all        bool
	quiet      bool
	jsonFile   string
	events     string
	redis      []string
	topology   string // --topology: servers to spawn for the run
	slowmo     float64
	speed      float64
	noted      bool // the notes on flags a scenario ignores are out
	faults     string
	fault      []string         // --fault, one each
	schedule   string           // --schedule: replay this file's run
	scheduleTo string           // --schedule-out: write the run's schedule
	planned    []scenario.Timed // the faults the run injects at their instants
	steps      []scenario.Step  // the steps a replayed schedule chose by hand
	serverFlags
}

func newRunCmd() *cobra.Command { return newRunCmdFor(&runFlags{}) }

// newRunCmdFor builds the run command with its flags bound to f.
func newRunCmdFor(f *runFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario headless and print its summary and verdict",
		Example: "  locklab run oversell --lock none --workers 50 --stock 1\n" +
			"  locklab run oversell --lock safe --retry full-jitter --stock 5\n" +
			"  locklab run oversell --all --quiet\n" +
			"  locklab run all\n" +
			"  locklab run oversell --redis redis://localhost:6379 --events run.jsonl",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && cmd.Flags().Changed("schedule") {
				return nil // the schedule names its scenario
			}
			if len(args) != 1 {
				return usagef("run needs one scenario: locklab run SCENARIO (one of %s, or all)", scenario.Names())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.schedule != "" {
				return f.replaySchedule(cmd, args)
			}
			return f.run(cmd, args[0])
		},
	}
	addRunFlags(cmd.Flags(), f)
	addScheduleFlags(cmd.Flags(), f)
	fl := cmd.Flags()
	fl.BoolVar(&f.all, "all", false, "run every strategy of the scenario and compare")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print the summary only, not one line per attempt")
	fl.StringVar(&f.jsonFile, "json", "", "write the results in the lab's JSON schema to FILE")
	return cmd
}

// params applies the flags the user set over the scenario's defaults.
func (f *runFlags) params(cmd *cobra.Command, sc *scenario.Scenario, strategy string, urls []string) (scenario.Params, error) {
	p := sc.Defaults
	set := cmd.Flags().Changed
	if !f.noted {
		f.noted = true
		f.noteIgnored(cmd, sc)
	}
	f.given.apply(&p, set)
	switch {
	case f.topology != "":
		if n := store.TopologyNodes(f.topology); set("nodes") && f.given.nodes() != n {
			return p, usagef("--nodes %d does not match --topology %s, which has %d node(s)", f.given.nodes(), f.topology, n)
		}
		p.Nodes = store.TopologyNodes(f.topology)
		if least, _ := quorumOf(strategy); multiNode(strategy) && p.Nodes < least {
			return p, usagef("%s needs at least %d independent Redis nodes for a quorum: use --topology %s", strategy, least, store.TopoRedlock)
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

func (f *runFlags) run(cmd *cobra.Command, name string) error {
	if name == "all" {
		return f.runAll(cmd)
	}
	sc, err := scenario.Lookup(name)
	if err != nil {
		return usageError{err}
	}
	urls, err := f.store(cmd)
	if err != nil {
		return err
	}
	strategies := []string{sc.Strategies[0]}
	switch {
	case f.all && cmd.Flags().Changed("lock"):
		return usagef("--all runs every strategy; leave out --lock")
	case f.all:
		strategies = sc.Strategies
	case f.lock != "":
		if !sc.Supports(f.lock) {
			return usagef("--lock %q is not a strategy of %s: want one of %s", f.lock, sc.Name, sc.StrategyNames())
		}
		strategies = []string{f.lock}
	}
	for _, strategy := range strategies { // before anything runs
		for _, o := range [][2]string{{"json", f.jsonFile}, {"events", f.events}, {"schedule-out", f.scheduleTo}} {
			if err := checkOutputPath(o[0], fileFor(o[1], strategy, len(strategies) > 1)); err != nil {
				return err
			}
		}
	}
	if strategies, err = f.usable(cmd, strategies, f.all); err != nil {
		return err
	}
	seed := seedFlag(cmd, f.seed)
	out := cmd.OutOrStdout()
	var results []*scenario.Summary
	for _, strategy := range strategies {
		p, err := f.params(cmd, sc, strategy, urls)
		if err != nil {
			return err
		}
		if f.planned, err = f.plannedFaults(cmd, p); err != nil {
			return err
		}
		s, err := f.runOne(cmd.Context(), out, sc, strategy, p, seed, urls, len(strategies) > 1)
		if err != nil {
			return err
		}
		results = append(results, s)
	}
	if len(results) > 1 {
		printComparison(out, results)
	}
	return nil
}

// createEventLog starts the file a run's event log is written to: it
// takes its name when closed.
func createEventLog(path string) (*files.Output, error) {
	return createOutput("events", path, "event log")
}

// fileFor names the output file of one strategy when several run.
func fileFor(path, strategy string, many bool) string {
	if path == "" || !many {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + strategy + ext
}

func (f *runFlags) runOne(ctx context.Context, out io.Writer, sc *scenario.Scenario, strategy string,
	p scenario.Params, seed uint64, urls []string, many bool) (*scenario.Summary, error) {
	st, err := store.Open(ctx, store.Config{URLs: urls, Nodes: p.Nodes, Speed: f.speed, Slowmo: f.slowmo,
		PoolSize: min(max(p.Workers, 10), 256), Servers: f.servers(), Topology: f.topology})
	if err != nil {
		return nil, storeError(err)
	}
	defer st.AbortOn(ctx)() // Ctrl-C: a frozen server must not hold the exit
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	cfg := scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version, Realtime: f.realtime, Faults: f.planned, Steps: f.steps}
	var evFile *files.Output
	if path := fileFor(f.events, strategy, many); path != "" {
		if evFile, err = createEventLog(path); err != nil {
			return nil, err
		}
		defer evFile.Close()
		cfg.Events = evFile
	}
	run, err := scenario.Start(ctx, st, cfg)
	if err != nil {
		return nil, usageError{err}
	}
	ended, runErr := awaitRun(ctx, run)
	var stepErr *scenario.StepError
	if errors.As(runErr, &stepErr) {
		return nil, runtimeError{stepErr}
	}
	sum := run.Summary()
	if !ended || runErr != nil && ctx.Err() != nil {
		unfinishedVerdict(sum, run.Header.Params.Workers)
	}
	if !f.quiet {
		printEntries(out, sum)
	}
	fmt.Fprint(out, sum.Box(run.Header))
	if sum.Machine != "" {
		fmt.Fprintf(out, "  note: %s\n", sum.Machine)
	}
	if evFile != nil {
		if err := evFile.Close(); err != nil {
			return sum, runtimeError{fmt.Errorf("cannot write the event log: %w", err)}
		}
		fmt.Fprintf(out, "  events: %s (%d)\n", evFile.Name(), run.Log.Len())
	}
	if path := fileFor(f.scheduleTo, strategy, many); path != "" && ended {
		if err := writeSchedule(out, path, run, cfg); err != nil {
			return sum, err
		}
	}
	if path := fileFor(f.jsonFile, strategy, many); path != "" {
		if err := writeReport(path, scenario.NewReport(run.Header, sum)); err != nil {
			return sum, err
		}
		fmt.Fprintf(out, "  json: %s\n", path)
	}
	if err := st.Refused(); err != nil {
		return sum, runtimeError{fmt.Errorf("the server refused some of the run's commands, so its verdict is not the lock's: %w", err)}
	}
	closed = true
	if !ended {
		return sum, runtimeError{abandon(st)}
	}
	closeErr := st.Close()
	if runErr != nil && ctx.Err() != nil {
		return sum, runtimeError{interrupted(st, closeErr)}
	}
	if runErr != nil {
		return sum, runtimeError{runErr}
	}
	if closeErr != nil {
		return sum, runtimeError{closeErr}
	}
	if err := sum.Doubt(); err != nil {
		return sum, runtimeError{err}
	}
	return sum, nil
}

// interrupted says what an interrupted run left behind: what Close really
// deleted, or what it could not and how to remove it.
func interrupted(st *store.Store, closeErr error) error {
	var left *store.LeftError
	if errors.As(closeErr, &left) {
		return fmt.Errorf("interrupted; %w", left)
	}
	return fmt.Errorf("interrupted; the run's %d key(s) were deleted", st.Deleted())
}

// storeError is a failure to open the store: a URL that does not parse is
// a usage error, the rest (the server's own words, with a hint) a runtime one.
func storeError(err error) error {
	var ue *store.URLError
	if errors.As(err, &ue) {
		return usageError{err}
	}
	return runtimeError{err}
}

func writeReport(path string, r *scenario.Report) error {
	return writeOutput("json", path, "JSON results", r.WriteJSON)
}

func printEntries(out io.Writer, s *scenario.Summary) {
	for _, e := range s.Entries {
		mark, lockMark := "✓", "✓"
		if !e.Success {
			mark = "✗"
		}
		switch {
		case s.NoLock():
			lockMark = "–" // there is no lock to take
		case !e.LockAcquired:
			lockMark = "✗"
		}
		line := fmt.Sprintf("  %s %s  lock %s", mark, e.ProcessID, lockMark)
		if s.HasStock {
			stock := "-"
			if e.StockBefore >= 0 {
				stock = fmt.Sprintf("%d→%d", e.StockBefore, e.StockAfter)
			}
			line += fmt.Sprintf("  stock %-7s", stock)
		}
		line += fmt.Sprintf(" %9.2fms", e.DurationMs)
		if e.Error != nil {
			line += "  " + *e.Error
		}
		fmt.Fprintln(out, line)
	}
}

// printComparison is the table of an --all run: the lab's stock columns,
// or the scenario's own measures when it has them.
func printComparison(out io.Writer, results []*scenario.Summary) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	notes := results[0].Notes
	head := "  STRATEGY\tOK\tLOCK FAILS\tOVERLAPS\tLOST\tMS"
	if results[0].HasStock {
		head = "  STRATEGY\tSOLD\tFINAL\tLOCK FAILS\tOVERLAPS\tLOST\tMS"
	}
	for _, n := range notes {
		head += "\t" + strings.ToUpper(n[0])
	}
	fmt.Fprintln(tw, head+"\tVERDICT")
	for _, s := range results {
		row := fmt.Sprintf("  %s\t%d", s.Strategy, s.Successes)
		if s.HasStock {
			row = fmt.Sprintf("  %s\t%d/%d\t%d", s.Strategy, s.Successes, s.InitialStock, s.FinalStock)
		}
		row += fmt.Sprintf("\t%d\t%d\t%d\t%.1f", s.FailedLock, s.Overlaps, s.LostUpdates, float64(s.Duration.D().Microseconds())/1000)
		for i := range notes {
			v := ""
			if i < len(s.Notes) {
				v = s.Notes[i][1]
			}
			row += "\t" + v
		}
		fmt.Fprintln(tw, row+"\t"+s.Verdict)
	}
	tw.Flush()
}

// addRunFlags registers the flags shared by run and the interactive view.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.lock, "lock", "", "lock strategy (see locklab list); default: the scenario's first")
	addParamFlags(fl, &f.given)
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: a fresh one, shown in the summary)")
	fl.StringVar(&f.events, "events", "", "write the run's event log (JSON Lines) to FILE")
	fl.StringArrayVar(&f.redis, "redis", nil, "real Redis URL, redis://[:password@]host:port/db (repeat for Redlock nodes; default $LOCKLAB_REDIS_URL, else embedded)")
	fl.StringVar(&f.topology, "topology", "", "spawn real servers for the run (redis-server on PATH): "+store.TopologyNames()+"; stopped when it ends")
	fl.Float64Var(&f.slowmo, "slowmo", 1, "real Redis only: make every duration this many times longer")
	fl.BoolVar(&f.realtime, "realtime", false, "embedded only: run in real time, goroutines scheduled by Go, instead of the deterministic simulation (the same seed, the same log)")
	fl.Float64Var(&f.speed, "speed", 1, fmt.Sprintf("embedded only: virtual clock speed, %s to %s (the view opens each scenario at its own)", plain(store.MinSpeed), plain(store.MaxSpeed)))
	addServerFlags(fl, &f.serverFlags)
}

// store returns the Redis URLs (flags, else $LOCKLAB_REDIS_URL) after
// checking --slowmo and --speed.
func (f *runFlags) store(cmd *cobra.Command) ([]string, error) {
	urls := redisURLs(f.redis)
	if err := checkFloat("slowmo", f.slowmo, minSlowmo, maxSlowmo); err != nil {
		return nil, err
	}
	for _, u := range urls {
		if _, err := store.ParseURL(u); err != nil {
			return nil, usageError{err} // never holds the password
		}
	}
	if err := checkFloat("speed", f.speed, store.MinSpeed, store.MaxSpeed); err != nil {
		return nil, err
	}
	if err := checkStoreFlags(cmd, urls); err != nil {
		return nil, err
	}
	if err := f.checkTopology(cmd, urls); err != nil {
		return nil, err
	}
	return urls, nil
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
