package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/locklab/locklab/untrusted"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// scheduleFlags fix what happens in a simulated run: faults planned at
// instants, a schedule to replay (its steps chosen by hand among them), a
// file to write the run's schedule to.
type scheduleFlags struct {
	faults     string
	fault      []string         // --fault, one each
	schedule   string           // --schedule: replay this file's run
	scheduleTo string           // --schedule-out: write the run's schedule
	planned    []scenario.Timed // the faults the run injects at their instants
	steps      []scenario.Step  // the steps a replayed schedule chose by hand
}

// addScheduleFlags registers run's flags for planned faults and schedules.
func addScheduleFlags(fl *pflag.FlagSet, f *scheduleFlags) {
	fl.StringVar(&f.faults, "faults", "", "faults planned at instants of the run's time: "+schedule.SpecHelp)
	fl.StringArrayVar(&f.fault, "fault", nil, "one planned fault, as --faults writes each (repeatable), e.g. --fault latency.down=80ms~20ms:w01-n0@10ms+1s")
	fl.StringVar(&f.schedule, "schedule", "", "replay the simulated run a schedule FILE describes (explore writes them), byte for byte")
	fl.StringVar(&f.scheduleTo, "schedule-out", "", "write the simulated run's schedule (seed, parameters, faults) to FILE")
}

// plannedFaults are --faults for a run with parameters p.
func (f *scheduleFlags) plannedFaults(cmd *cobra.Command, p event.Params) ([]scenario.Timed, error) {
	if !cmd.Flags().Changed("faults") && !cmd.Flags().Changed("fault") {
		return nil, nil
	}
	var faults []scenario.Timed
	if cmd.Flags().Changed("faults") {
		var err error
		if faults, err = schedule.ParseFaults(f.faults, p); err != nil {
			return nil, usagef("--faults: %v", err)
		}
	}
	for _, one := range f.fault {
		if strings.Contains(one, ",") {
			return nil, usagef("--fault %q: one fault each (--faults takes a comma-separated list)", untrusted.Line(one))
		}
		more, err := schedule.ParseFaults(one, p)
		if err != nil {
			return nil, usagef("--fault: %v", err)
		}
		faults = append(faults, more...)
	}
	slices.SortStableFunc(faults, func(a, b scenario.Timed) int { return cmp.Compare(a.At, b.At) })
	return faults, nil
}

// replayable are the flags that go with --schedule: the rest would change
// the run the schedule fixes.
var replayable = []string{"schedule", "schedule-out", "events", "json", "quiet", "lock"}

// replaySchedule runs the run a schedule file describes.
func (f *runFlags) replaySchedule(cmd *cobra.Command, args []string) error {
	if extra := notApplying(cmd, replayable...); len(extra) > 0 {
		return usagef("%s %s not apply with --schedule: the schedule fixes the run's parameters, seed and faults (edit the file, or leave %s out)",
			flagList(extra), doesOrDo(extra), flagList(extra))
	}
	s, sc, err := checkedSchedule(cmd, f.schedule)
	if err != nil {
		return err
	}
	what := s.Scenario + "/" + s.Strategy
	switch {
	case len(args) == 1 && args[0] != s.Scenario:
		return usagef("--schedule %s is a schedule of %s, not of %s", f.schedule, what, args[0])
	case f.lock != "" && f.lock != s.Strategy:
		return usagef("--schedule %s is a schedule of %s, not of --lock %s", f.schedule, what, f.lock)
	}
	for _, o := range [][2]string{{"json", f.jsonFile}, {"events", f.events}, {"schedule-out", f.scheduleTo}} {
		if err := checkOutputPath(o[0], o[1]); err != nil {
			return err
		}
	}
	f.planned, f.steps = s.Faults, s.Steps
	f.noted = true
	_, err = f.runOne(cmd.Context(), cmd.OutOrStdout(), sc, s.Strategy, s.Params, s.Seed, nil, false)
	return err
}

// readSchedule reads --schedule: a file that is not one is a usage error
// in one line.
func readSchedule(cmd *cobra.Command, path string) (*schedule.Schedule, error) {
	r, err := openInput(cmd.Context(), path, "schedule")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s, err := schedule.Read(r)
	if err != nil {
		if _, ok := err.(*schedule.Error); ok {
			return nil, usagef("--schedule %s: %v", path, err)
		}
		return nil, runtimeError{fmt.Errorf("cannot read the schedule %s: %w", path, err)}
	}
	return s, nil
}

// writeSchedule writes a finished run's schedule; a run in real time has
// none.
func writeSchedule(out io.Writer, path string, run *scenario.Run, cfg scenario.Config) error {
	if !run.Simulated() {
		return usagef("--schedule-out: this run kept %s, so it has no schedule to replay", run.Header.Time)
	}
	cfg.Faults = run.Faults() // with those pressed meanwhile, where they landed
	cfg.Steps = run.Hand()
	if err := writeOutput("schedule-out", path, "schedule", schedule.Of(cfg).Write); err != nil {
		return err
	}
	fmt.Fprintf(out, "  schedule: %s (replay: locklab run --schedule %s)\n", path, path)
	return nil
}

// checkedSchedule reads a schedule file and refuses, in one line, one this
// locklab cannot replay.
func checkedSchedule(cmd *cobra.Command, path string) (*schedule.Schedule, *scenario.Scenario, error) {
	s, err := readSchedule(cmd, path)
	if err != nil {
		return nil, nil, err
	}
	what := s.Scenario + "/" + s.Strategy
	sc, err := scenario.Lookup(s.Scenario)
	if err != nil {
		return nil, nil, usagef("--schedule %s: %v", path, err)
	}
	switch {
	case !sc.Supports(s.Strategy):
		return nil, nil, usagef("--schedule %s: %q is not a strategy of %s: want one of %s", path, s.Strategy, sc.Name, sc.StrategyNames())
	case sc.RealTime != "" || scenario.ServerOf(s.Strategy) != string(lock.ServerRedis):
		return nil, nil, usagef("--schedule %s: %s keeps real time, so it has no schedule to replay", path, what)
	}
	if err := s.Params.Validate(); err != nil {
		return nil, nil, usagef("--schedule %s: its parameters: %v", path, err)
	}
	if err := s.Check(); err != nil {
		return nil, nil, usagef("--schedule %s: %v", path, err)
	}
	return s, sc, nil
}
