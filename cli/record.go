package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/tui"
	"github.com/spf13/cobra"
)

// recordFlags are record's: what to run and on which store (no spawned
// topology), how fast, its event logs, a schedule to record, and the
// recording's own.
type recordFlags struct {
	scenarioFlags
	storeFlags
	paceFlags
	outputFlags
	scheduleFlags
	cast    string
	size    string
	from    []string
	present bool
	theme   string
	fps     int
	hold    time.Duration
	maxGap  time.Duration
	play    float64
	talk    string
}

func newRecordCmd() *cobra.Command {
	f := &recordFlags{}
	cmd := &cobra.Command{
		Use:   "record [SCENARIO[:STRATEGY]... | --from FILE.jsonl... | --talk TALK.yaml] --cast FILE",
		Short: "Record runs through the view as an asciicast v2 file, without a terminal",
		Long: "record plays runs through the interactive view at fixed frame intervals and writes an asciicast v2\n" +
			"recording (asciinema play / cat, svg-term). With --from it records saved event logs: the same logs\n" +
			"and flags give the same bytes. With scenarios it first runs each one on the embedded store (a real\n" +
			"race, so two runs differ as runs do; save them with --events to record them again identically).\n" +
			"With --talk it records a whole talk file in presenter mode: each scene's title card, then its run\n" +
			"(the scene's saved log, a --from log per scene, or a fresh run), with markers at each scene and beat.\n" +
			"Runs play at their scenario's own pace, as the view opens them, unless --play-speed says otherwise.",
		Example: "  locklab record ttl-expiry:fenced --cast ttl.cast --present\n" +
			"  locklab record oversell:none deadlock:safe --cast demo.cast --size 100x30\n" +
			"  locklab run ttl-expiry --events run.jsonl && locklab record --from run.jsonl --cast run.cast\n" +
			"  locklab record --talk talks/locking-101.yaml --cast talk.cast --size 100x30",
		RunE: func(cmd *cobra.Command, args []string) error { return f.record(cmd, args) },
	}
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags)
	addStoreFlags(fl, &f.storeFlags, false)
	addPaceFlags(fl, &f.paceFlags, true)
	addEventsFlag(fl, &f.outputFlags)
	refuseFlag(cmd, "topology", "it spawns servers for locklab run and the interactive view; record takes --redis URL")
	fl.StringVar(&f.cast, "cast", "", "write the recording to FILE (required)")
	fl.StringVar(&f.size, "size", "120x36", "terminal size, COLSxROWS (at least 80x24)")
	fl.StringArrayVar(&f.from, "from", nil, "record a saved event log instead of running (repeatable)")
	fl.BoolVar(&f.present, "present", false, "presenter mode: stop at each beat with its caption")
	fl.StringVar(&f.theme, "theme", "", "dark, light, high-contrast, colour-blind or mono (NO_COLOR: mono)")
	fl.IntVar(&f.fps, "fps", 10, "frames per second, 1 to 60")
	fl.DurationVar(&f.hold, "hold", 3*time.Second, "presenter mode: how long each caption stays")
	fl.DurationVar(&f.maxGap, "max-gap", 0, "presenter mode: the longest a stretch between two beats plays; a longer one plays faster (0: each at its run's pace)")
	fl.Float64Var(&f.play, "play-speed", 0, "playback speed of the recorded runs, 0.00005 to 10 (default: each scenario's own pace)")
	fl.StringVar(&f.schedule, "schedule", "", "record the simulated run a schedule FILE describes (explore writes them), with a marker at every event and at each violation")
	fl.StringVar(&f.talk, "talk", "", "record a talk file's scenes in presenter mode, with their title cards")
	_ = cmd.MarkFlagFilename("talk", "yaml", "yml")
	return cmd
}

// recordFlagNames are the flags of record that apply with --from.
var recordFlagNames = []string{"cast", "size", "from", "present", "theme", "fps", "hold", "max-gap", "play-speed", "talk", "schedule"}

// Limits of --hold.
const (
	minHold = 100 * time.Millisecond
	maxHold = time.Minute
)

func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 80 || h < 24 || w > 500 || h > 200 {
		return 0, 0, usagef("--size %q: want COLSxROWS from 80x24 to 500x200, like 120x36", s)
	}
	return w, h, nil
}

func (f *recordFlags) record(cmd *cobra.Command, args []string) error {
	if err := f.check(cmd, args); err != nil {
		return err
	}
	w, h, err := parseSize(f.size)
	if err != nil {
		return err
	}
	th, err := pickTheme(f.theme)
	if err != nil {
		return err
	}
	if err := checkOutputPath("events", f.events); err != nil {
		return err
	}
	// The recording streams to a file beside FILE, renamed to it once
	// complete: a wrong path fails before anything runs, and an
	// interrupted recording leaves nothing behind.
	out, err := newOutputFile("cast", f.cast, "recording")
	if err != nil {
		return err
	}
	defer out.discard()
	tk, runs, names, err := f.runs(cmd, args)
	if err != nil {
		return err
	}
	var titles []string
	for _, l := range runs {
		titles = append(titles, l.Header.Scenario+" · "+l.Header.Strategy)
	}
	if tk != nil && tk.Title != "" {
		titles = []string{tk.Title}
	}
	bw := &countingWriter{w: out}
	err = tui.Record(cmd.Context(), bw, runs, names, tui.RecordOptions{Theme: th, Width: w, Height: h, Present: f.present,
		FPS: f.fps, Hold: f.hold, MaxGap: f.maxGap, Speed: f.play, Talk: tk, Title: "locklab — " + strings.Join(titles, ", "),
		Timestamp: castTimestamp(runs), EventMarks: f.schedule != ""})
	switch {
	case cmd.Context().Err() != nil:
		return runtimeError{errors.New("interrupted; nothing was recorded")}
	case err != nil:
		return runtimeError{err}
	}
	if err := out.commit(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "recorded %s to %s (%d bytes, %dx%d)\n", strings.Join(titles, ", "), f.cast, bw.n, w, h)
	return nil
}

// check refuses flags that do not go together (with --from, --talk or
// --schedule, most of run's do not) or out of their range, and notes the
// presenter's flags given without presenter mode.
func (f *recordFlags) check(cmd *cobra.Command, args []string) error {
	switch {
	case f.cast == "":
		return usagef("record needs --cast FILE: where to write the recording")
	case len(f.from) > 0 && len(args) > 0:
		return usagef("record takes scenarios or --from logs, not both")
	case f.talk != "" && len(args) > 0:
		return usagef("record --talk records the talk's own scenes: leave out the scenarios (--from gives their runs, one per scene)")
	case f.talk != "" && len(notApplying(cmd, append(recordFlagNames, "events")...)) > 0:
		extra := notApplying(cmd, append(recordFlagNames, "events")...)
		return usagef("--talk takes each scene's parameters from the talk file: %s %s not apply", flagList(extra), doesOrDo(extra))
	case f.schedule != "" && (len(args) > 0 || len(f.from) > 0 || f.talk != ""):
		return usagef("record --schedule FILE records the run the schedule fixes: leave out scenarios, --from and --talk")
	case f.schedule != "" && len(notApplying(cmd, append(recordFlagNames, "events")...)) > 0:
		extra := notApplying(cmd, append(recordFlagNames, "events")...)
		return usagef("--schedule fixes the run's parameters, seed and faults: %s %s not apply", flagList(extra), doesOrDo(extra))
	case len(f.from) == 0 && len(args) == 0 && f.talk == "" && f.schedule == "":
		return usagef("record needs a scenario (locklab record ttl-expiry --cast out.cast) or --from FILE.jsonl")
	case len(f.from) > 0 && len(notApplying(cmd, recordFlagNames...)) > 0:
		extra := notApplying(cmd, recordFlagNames...)
		return usagef("--from records logs that already ran: %s %s not apply (record takes %s with --from)",
			flagList(extra), doesOrDo(extra), flagList(dashed(recordFlagNames)))
	case f.fps < 1 || f.fps > 60:
		return usagef("--fps must be between 1 and 60 (got %d)", f.fps)
	case cmd.Flags().Changed("play-speed") && !inRange(f.play, store.MinSpeed, store.MaxSpeed):
		return usagef("--play-speed must be a number from %s to %s (got %g)", plain(store.MinSpeed), plain(store.MaxSpeed), f.play)
	case f.hold < minHold || f.hold > maxHold:
		return usagef("--hold must be between %v and %v (got %v)", minHold, maxHold, f.hold)
	case f.maxGap != 0 && (f.maxGap < time.Second || f.maxGap > 10*time.Minute):
		return usagef("--max-gap must be 0 (off) or between 1s and 10m (got %v)", f.maxGap)
	}
	if f.talk != "" {
		f.present = true
	}
	if f.hold != 3*time.Second && !f.present {
		note(cmd, "--hold is how long a caption stays in presenter mode; without --present it changes nothing")
	}
	if f.maxGap != 0 && !f.present {
		note(cmd, "--max-gap is the longest stretch between two beats in presenter mode; without --present it changes nothing")
	}
	return nil
}

// runs are what is recorded: a talk's scenes, a schedule's run, saved
// logs, or fresh runs of the scenarios named; with their names.
func (f *recordFlags) runs(cmd *cobra.Command, args []string) (*talk.Talk, []*scenario.Loaded, []string, error) {
	switch {
	case f.talk != "":
		return f.runTalk(cmd)
	case f.schedule != "":
		runs, names, err := f.runSchedule(cmd)
		return nil, runs, names, err
	case len(f.from) > 0:
		var runs []*scenario.Loaded
		var names []string
		for _, path := range f.from {
			l, err := loadLogFile(cmd.Context(), path)
			if err != nil {
				return nil, nil, nil, err
			}
			runs, names = append(runs, l), append(names, filepath.Base(path))
		}
		return nil, runs, names, nil
	}
	runs, names, err := f.runForRecording(cmd, args)
	return nil, runs, names, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// runForRecording runs each SCENARIO[:STRATEGY] on the embedded store and
// keeps its log.
func (f *recordFlags) runForRecording(cmd *cobra.Command, args []string) ([]*scenario.Loaded, []string, error) {
	urls, err := f.urls(cmd, &f.paceFlags)
	if err != nil {
		return nil, nil, err
	}
	seed := seedFlag(cmd, f.seed)
	var runs []*scenario.Loaded
	var names []string
	for i, arg := range args {
		name, strategy, _ := strings.Cut(arg, ":")
		sc, err := scenario.Lookup(name)
		if err != nil {
			return nil, nil, usageError{err}
		}
		if strategy == "" {
			strategy = firstNonEmpty(f.lock, sc.Strategies[0])
		}
		if !sc.Supports(strategy) {
			return nil, nil, usagef("%q is not a strategy of %s: want one of %s", strategy, sc.Name, sc.StrategyNames())
		}
		p, err := f.params(cmd, sc, strategy, urls, "")
		if err != nil {
			return nil, nil, err
		}
		l, err := f.runKept(cmd.Context(), sc, strategy, p, seed, urls, i, len(args) > 1)
		if err != nil {
			return nil, nil, err
		}
		runs, names = append(runs, l), append(names, arg)
	}
	return runs, names, nil
}

// runKept runs one scenario and keeps its log (and writes it with --events).
func (f *recordFlags) runKept(ctx context.Context, sc *scenario.Scenario, strategy string, p event.Params,
	seed uint64, urls []string, i int, many bool) (*scenario.Loaded, error) {
	cfg := scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version, Realtime: f.realtime,
		Faults: f.planned, Steps: f.steps}
	var evFile *files.Output
	r, st, err := launch.Start(ctx, f.where(urls, &f.paceFlags), cfg, eventLogAt(fileFor(f.events, strconv.Itoa(i+1), many), &evFile))
	if evFile != nil {
		defer evFile.Close()
	}
	if err != nil {
		return nil, startError(err)
	}
	defer st.Close()
	var stepErr *scenario.StepError
	if err := r.Wait(); errors.As(err, &stepErr) {
		return nil, runtimeError{stepErr}
	} else if err != nil {
		if ctx.Err() != nil {
			return nil, runtimeError{errors.New("interrupted; nothing was recorded")}
		}
		return nil, runtimeError{err}
	}
	return &scenario.Loaded{Header: r.Header, Log: r.Log, Summary: r.Summary()}, nil
}

// runTalk loads the talk file of --talk and runs each scene that has no
// saved log on the embedded store (saved with --events, numbered by scene).
func (f *recordFlags) runTalk(cmd *cobra.Command) (*talk.Talk, []*scenario.Loaded, []string, error) {
	tk, logs, err := loadTalk(cmd, f.talk)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(f.from) > 0 && len(f.from) != len(tk.Scenes) {
		return nil, nil, nil, usagef("--talk %s has %d scenes: give one --from log per scene, in order (got %d)", f.talk, len(tk.Scenes), len(f.from))
	}
	names := make([]string, len(tk.Scenes))
	for i, sc := range tk.Scenes {
		if len(f.from) > 0 {
			l, err := loadLogFile(cmd.Context(), f.from[i])
			if err != nil {
				return nil, nil, nil, err
			}
			if l.Header.Scenario != sc.Scenario || l.Header.Strategy != sc.Strategy {
				return nil, nil, nil, usagef("--from %s is a run of %s · %s; scene %d of %s is %s · %s", f.from[i],
					l.Header.Scenario, l.Header.Strategy, i+1, f.talk, sc.Scenario, sc.Strategy)
			}
			logs[i], names[i] = l, filepath.Base(f.from[i])
			continue
		}
		names[i] = sc.Scenario + ":" + sc.Strategy
		if logs[i] != nil {
			names[i] = filepath.Base(sc.Log)
			continue
		}
		s, _ := scenario.Lookup(sc.Scenario)
		if logs[i], err = f.runKept(cmd.Context(), s, sc.Strategy, sc.Params, sc.Seed, nil, i, true); err != nil {
			return nil, nil, nil, err
		}
	}
	return tk, logs, names, nil
}

// castTimestamp is the recording's date: its first run's, unless every
// run was simulated — then none, so that the same seeds give the same
// bytes on any day.
func castTimestamp(runs []*scenario.Loaded) int64 {
	for _, l := range runs {
		if l.Header.Time != scenario.TimeSimulated {
			return runs[0].Header.StartedAt.Unix()
		}
	}
	return 0
}

// runSchedule runs the simulated run of --schedule and keeps its log.
func (f *recordFlags) runSchedule(cmd *cobra.Command) ([]*scenario.Loaded, []string, error) {
	s, sc, err := checkedSchedule(cmd, f.schedule)
	if err != nil {
		return nil, nil, err
	}
	f.planned, f.steps = s.Faults, s.Steps
	l, err := f.runKept(cmd.Context(), sc, s.Strategy, s.Params, s.Seed, nil, 0, false)
	if err != nil {
		return nil, nil, err
	}
	return []*scenario.Loaded{l}, []string{filepath.Base(f.schedule)}, nil
}
