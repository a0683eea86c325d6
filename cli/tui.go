package cli

import (
	"fmt"
	"os"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/tui"
	"github.com/spf13/cobra"
)

// tuiFlags are the root command's: what to run, where, how fast, its
// event log, a schedule or level, and what only the interactive view has.
type tuiFlags struct {
	scenarioFlags
	storeFlags
	paceFlags
	outputFlags
	scheduleFlags
	scenario string
	theme    string
	present  bool
	cast     string
	serve    string
	level    string
	allow    []string // --allow-host, with --serve
	sshFlags
}

func addTUIFlags(cmd *cobra.Command, f *tuiFlags) {
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags)
	addStoreFlags(fl, &f.storeFlags, true)
	addPaceFlags(fl, &f.paceFlags, true)
	addEventsFlag(fl, &f.outputFlags)
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "preselect a scenario; with --lock, start it at once")
	cmd.Flags().StringVar(&f.theme, "theme", "", "dark, light, high-contrast, colour-blind or mono (NO_COLOR: mono)")
	cmd.Flags().BoolVar(&f.present, "present", false, "presenter mode: stop at each beat with its caption (p toggles it)")
	cmd.Flags().StringVar(&f.cast, "cast", "", "record the session as an asciicast v2 file")
	cmd.Flags().StringVar(&f.schedule, "schedule", "", "manual: you are the scheduler (you choose which worker moves at each step); or a schedule FILE to play (explore writes them)")
	cmd.Flags().StringVar(&f.level, "level", "", "play a level in the scheduler mode: a shipped level's name or number (locklab list levels… see README), or a level FILE")
	cmd.Flags().StringVar(&f.serve, "serve", "", "also serve the run over HTTP on host:port (each request a lane on screen; see locklab serve)")
	addAllowHostFlag(cmd.Flags(), &f.allow)
	addSSHFlags(cmd.Flags(), &f.sshFlags)
	cmd.Flags().Lookup("ssh").Usage = "with --serve: also serve its live view over SSH on ADDR (:2222 is loopback; 0.0.0.0:2222 needs a password or keys)"
}

// runTUI opens the interactive view.
func (f *tuiFlags) runTUI(cmd *cobra.Command) error {
	th, err := pickTheme(f.theme)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("serve") {
		return f.serveTUI(cmd, th)
	}
	if cmd.Flags().Changed("allow-host") {
		return usagef("--allow-host names the served run's server: add --serve ADDR")
	}
	if f.sshFlags.addr != "" || cmd.Flags().Changed("ssh") {
		return usagef("--ssh serves the live view of a shared race: add --serve ADDR (each HTTP request a lane), or use locklab host --ssh ADDR")
	}
	if _, err := f.sshConfig(cmd); err != nil {
		return err
	}
	if f.level != "" || f.schedule != "" && f.schedule != "manual" {
		if extra := paramFlagsSet(cmd); len(extra) > 0 || cmd.Flags().Changed("scenario") || cmd.Flags().Changed("seed") {
			return usagef("a level or a schedule fixes the run: leave out --scenario, --seed and the parameter flags")
		}
	}
	urls, err := f.urls(cmd, &f.paceFlags)
	if err != nil {
		return err
	}
	for _, o := range [][2]string{{"cast", f.cast}, {"events", f.events}} {
		if err := checkOutputPath(o[0], o[1]); err != nil {
			return err
		}
	}
	opts := tui.Options{Theme: th, URLs: urls, Slowmo: f.slowmo, Realtime: f.realtime, Speed: f.speed, SpeedSet: cmd.Flags().Changed("speed"), Events: f.events,
		Tool: "locklab " + version, Seed: f.seed, SeedSet: cmd.Flags().Changed("seed"), Present: f.present, Cast: f.cast,
		Servers: f.servers(), Topology: f.topology}
	if f.scenario != "" {
		sc, err := scenario.Lookup(f.scenario)
		if err != nil {
			return usageError{fmt.Errorf("--scenario: %w", err)}
		}
		opts.Scenario = sc.Name
		opts.Strategy = sc.Strategies[0]
		if f.lock != "" {
			if !sc.Supports(f.lock) {
				return usagef("--lock %q is not a strategy of %s: want one of %s", f.lock, sc.Name, sc.StrategyNames())
			}
			if _, err := f.usable(cmd, []string{f.lock}, false); err != nil {
				return err
			}
			opts.Strategy, opts.Start = f.lock, true
		}
		p, err := f.params(cmd, sc, opts.Strategy, urls, f.topology)
		if err != nil {
			return err
		}
		opts.Params = &p
	} else if extra := paramFlagsSet(cmd); len(extra) > 0 {
		return usagef("%s %s to one scenario: add --scenario NAME (one of %s)", flagList(extra), applyOrApplies(extra), scenario.Names())
	}
	if err := f.scheduleTUI(cmd, &opts); err != nil {
		return err
	}
	if !interactive() {
		return usagef("the interactive view needs a terminal; for a headless run use: locklab run %s", firstNonEmpty(opts.Scenario, "oversell"))
	}
	return tui.Run(cmd.Context(), opts, os.Stdin, os.Stdout)
}

// paramFlagsSet lists the set flags that are a scenario's parameters.
func paramFlagsSet(cmd *cobra.Command) []string {
	var out []string
	for _, n := range changed(cmd) {
		if _, ok := event.ParamByName(n); ok || n == "lock" {
			out = append(out, "--"+n)
		}
	}
	return out
}

func applyOrApplies(names []string) string {
	if len(names) == 1 {
		return "applies"
	}
	return "apply"
}
