package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
)

// runFlags are run's: what to run, where, how fast, what to keep, and
// the schedule flags of a simulated run.
type runFlags struct {
	scenarioFlags
	storeFlags
	paceFlags
	outputFlags
	scheduleFlags
	all bool
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
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags)
	addStoreFlags(fl, &f.storeFlags, true)
	addPaceFlags(fl, &f.paceFlags, true)
	addEventsFlag(fl, &f.outputFlags)
	addReportFlags(fl, &f.outputFlags)
	addScheduleFlags(fl, &f.scheduleFlags)
	fl.BoolVar(&f.all, "all", false, "run every strategy of the scenario and compare")
	return cmd
}

func (f *runFlags) run(cmd *cobra.Command, name string) error {
	if name == "all" {
		return f.runAll(cmd)
	}
	sc, err := scenario.Lookup(name)
	if err != nil {
		return usageError{err}
	}
	urls, err := f.urls(cmd, &f.paceFlags)
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
	var results []*check.Summary
	for _, strategy := range strategies {
		p, err := f.params(cmd, sc, strategy, urls, f.topology)
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

func (f *runFlags) runOne(ctx context.Context, out io.Writer, sc *scenario.Scenario, strategy string,
	p event.Params, seed uint64, urls []string, many bool) (*check.Summary, error) {
	cfg := scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version, Realtime: f.realtime, Faults: f.planned, Steps: f.steps}
	var evFile *files.Output
	run, st, err := launch.Start(ctx, f.where(urls, &f.paceFlags), cfg, eventLogAt(fileFor(f.events, strategy, many), &evFile))
	if err != nil {
		if evFile != nil {
			evFile.Close()
		}
		return nil, startError(err)
	}
	defer st.AbortOn(ctx)() // Ctrl-C: a frozen server must not hold the exit
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	if evFile != nil {
		defer evFile.Close()
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
		if err := writeReport(path, check.NewReport(run.Header, sum)); err != nil {
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

func writeReport(path string, r *check.Report) error {
	return writeOutput("json", path, "JSON results", r.WriteJSON)
}

func printEntries(out io.Writer, s *check.Summary) {
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
func printComparison(out io.Writer, results []*check.Summary) {
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
