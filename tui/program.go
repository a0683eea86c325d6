package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/levels"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/cast"
)

// Options configure the interactive view.
type Options struct {
	Theme    *themes.Theme
	URLs     []string // real Redis; empty: embedded
	Topology string   // servers spawned for each run (spawn.Topologies); "" none
	Slowmo   float64
	Realtime bool    // embedded: real time instead of the simulation
	Speed    float64 // embedded clock speed; 0: the scenario's own
	SpeedSet bool    // --speed was given: it wins over the scenario's
	Scenario string  // preselected scenario
	Strategy string  // preselected strategy
	Params   *event.Params
	Seed     uint64
	SeedSet  bool
	Start    bool   // start the preselected run at once
	Events   string // write every run's event log here
	Replay   *scenario.Loaded
	Loading  *scenario.Loading // a replay still being read: shown as it loads
	Name     string            // the replayed file
	Tool     string
	Present  bool          // presenter mode from the start
	Cast     string        // record the session as an asciicast v2 file here
	Servers  store.Servers // servers beyond Redis (--postgres, …)
	// The scheduler mode (the person decides each step), a level to play
	// in it, and a schedule's faults and hand-chosen steps for the run
	// started at once.
	Manual bool
	Level  *levels.Level
	Faults []scenario.Timed
	Steps  []scenario.Step

	// A talk's hold on presenter mode. Extras add a caption and notes to
	// beats, keyed by beat ID ("race", "verdict") or number from 1 ("2").
	// OnBeat is called from Update whenever the presenter's state changes
	// (see App.Presenter). AfterLast is called when → is pressed at the
	// last beat of a finished run; its command is run (a talk moves to its
	// next scene there). Without it, → at the last beat does nothing.
	Extras    map[string]BeatExtra
	OnBeat    func(PresenterState)
	AfterLast func() tea.Cmd
	// Talk, when set, is given scene by scene in presenter mode; TalkLogs
	// holds a scene's saved run (nil: run it live), Publish gets the talk's
	// position for the speaker's notes whenever it moves.
	Talk     *talk.Talk
	TalkLogs []*scenario.Loaded
	Publish  func(talk.Position)
}

// Run runs the interactive view until the user quits or ctx ends (a
// signal); either way the run's keys are deleted before it returns.
func Run(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	a := New(opts)
	if opts.Cast != "" {
		f, err := files.Create(opts.Cast)
		if err != nil {
			return fmt.Errorf("cannot write the recording: %w", err)
		}
		defer func() {
			if cerr := f.Close(); cerr != nil {
				fmt.Fprintln(os.Stderr, "locklab: the recording was not saved:", cerr)
			}
		}()
		w, h := fullW, fullH
		if t, ok := out.(interface{ Fd() uintptr }); ok {
			if cw, ch, err := term.GetSize(t.Fd()); err == nil {
				w, h = cw, ch
			}
		}
		title := "locklab"
		if opts.Scenario != "" {
			title += " — " + opts.Scenario
		}
		th := opts.Theme
		if opts.Present && th.Name != "mono" {
			th = presentTheme
		}
		rec, err := cast.NewWriter(f, castHeader(th, w, h, title, time.Now().Unix()), cast.WallClock())
		if err != nil {
			return err
		}
		a.rec, a.recW, a.recH = rec, w, h
		if f, ok := out.(*os.File); ok {
			out = teeFile{f, rec} // still the terminal, for its size and mode
		} else {
			out = io.MultiWriter(out, rec)
		}
		defer func() {
			if cerr := rec.Close(); cerr != nil {
				fmt.Fprintln(os.Stderr, "locklab: the recording is incomplete:", cerr)
			}
		}()
	}
	p := tea.NewProgram(a, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	_, err := p.Run()
	a.shutdown()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	if err == nil && len(a.left) > 0 {
		return errors.Join(a.left...) // what the runs left behind, and how to remove it
	}
	return err
}

// teeFile is the terminal, with everything written to it recorded too.
type teeFile struct {
	*os.File
	rec io.Writer
}

func (t teeFile) Write(p []byte) (int, error) {
	n, err := t.File.Write(p)
	t.rec.Write(p[:n])
	return n, err
}

func (t teeFile) WriteString(s string) (int, error) { return t.Write([]byte(s)) }
