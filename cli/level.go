package cli

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/locklab/locklab/levels"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/locklab/locklab/tui"
	"github.com/spf13/cobra"
)

// scheduleTUI reads the view's --schedule and --level: the scheduler mode,
// a level to play in it, or a schedule to play.
func (f *tuiFlags) scheduleTUI(cmd *cobra.Command, opts *tui.Options) error {
	var s *schedule.Schedule
	switch {
	case f.level != "" && f.schedule != "" && f.schedule != "manual":
		return usagef("--level and --schedule FILE both fix the run: give one")
	case f.level != "":
		l, err := readLevel(cmd, f.level)
		if err != nil {
			return err
		}
		opts.Level, opts.Manual, s = l, true, l.Run
	case f.schedule == "manual":
		if opts.Scenario == "" || !opts.Start {
			return usagef("--schedule manual schedules one run: add --scenario NAME --lock STRATEGY, or play a --level")
		}
		opts.Manual = true
		return nil
	case f.schedule != "":
		var err error
		if s, err = readSchedule(cmd, f.schedule); err != nil {
			return err
		}
	default:
		return nil
	}
	if extra := paramFlagsSet(cmd); len(extra) > 0 || cmd.Flags().Changed("scenario") || cmd.Flags().Changed("seed") {
		return usagef("a level or a schedule fixes the run: leave out --scenario, --seed and the parameter flags")
	}
	sc, err := scenario.Lookup(s.Scenario)
	if err != nil {
		return usagef("%v", err)
	}
	if !sc.Supports(s.Strategy) || sc.RealTime != "" {
		return usagef("%s/%s has no schedule to play", s.Scenario, s.Strategy)
	}
	if err := s.Params.Validate(); err != nil {
		return usagef("its parameters: %v", err)
	}
	if err := s.Check(); err != nil {
		return usagef("%v", err)
	}
	p := s.Params
	opts.Scenario, opts.Strategy, opts.Params, opts.Seed, opts.SeedSet, opts.Start = s.Scenario, s.Strategy, &p, s.Seed, true, true
	opts.Faults, opts.Steps = s.Faults, s.Steps
	return nil
}

// readLevel is a shipped level by name or number, or a level file.
func readLevel(cmd *cobra.Command, name string) (*levels.Level, error) {
	if l, err := levels.Lookup(name); err == nil {
		return l, nil
	} else if _, serr := os.Stat(name); serr != nil {
		return nil, usagef("--level: %v", err)
	}
	r, err := openInput(cmd.Context(), name, "level")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, schedule.MaxBytes+1))
	if err != nil {
		return nil, runtimeError{errors.New("cannot read the level " + name + ": " + err.Error())}
	}
	l, err := levels.Read(bytes.NewReader(data))
	if err != nil {
		return nil, usagef("--level %s: %v", name, err)
	}
	return l, nil
}
