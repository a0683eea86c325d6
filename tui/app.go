// Package tui is locklab's interactive view (Bubble Tea): a picker for the
// scenario and strategy, a parameter form, and the run view — swimlanes,
// lock lanes with TTL countdowns, the stock gauge, the retry-delay
// histogram, the wait-for graph, the event log and the verdict — over a live
// run or a recorded one. It reads runs only through their event logs.
package tui

import (
	crand "crypto/rand"
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/cast"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/present"
	"github.com/locklab/locklab/untrusted"
)

// presentTheme is presenter mode's theme.
var presentTheme = present.Theme

type screen int

const (
	screenPicker screen = iota
	screenForm
	screenRun
)

// frameMsg is the frame tick: the only way events reach the screen.
type frameMsg time.Time

const frameEvery = time.Second / 30

// flashFor is how long a footer message stays.
const flashFor = 2 * time.Second

func frame() tea.Cmd {
	return tea.Tick(frameEvery, func(t time.Time) tea.Msg { return frameMsg(t) })
}

// startedMsg brings a started session (or why it failed).
type startedMsg struct {
	s   *session
	err error
}

// App is the root model.
type App struct {
	left      []error // what stopped runs could not delete
	opts      *Options
	theme     *themes.Theme
	w, h      int
	screen    screen
	picker    picker
	form      form
	run       *runView
	orig      *runView    // the original run, while a branch of it is on screen
	branching *branchInfo // a branch being started
	starting  bool
	help      help.Model
	showHelp  bool
	keys      globalKeys
	err       string
	// A message the footer shows for a moment (the theme's name), until
	// the first frame after flashUntil.
	flash                 string
	flashUntil, lastFrame time.Time
	// The recording, with --cast, and the size it last recorded.
	rec        *cast.Writer
	recW, recH int
	reported   PresenterState // the state OnBeat last heard
	// On stage (presenter mode or a talk): the screen is dark until a key
	// is pressed; q was pressed once and q again quits.
	blank, quitAsked bool
	recording        bool // drawn for a recording: no key help nobody can press
	talk             *talkPlay
	dot              dotKey           // "." on stage: a tap goes on, held it blanks
	now              func() time.Time // the wall clock, for telling a held key
}

// New returns the root model.
func New(opts Options) *App {
	if opts.Theme == nil {
		opts.Theme = themes.Dark()
	}
	a := &App{opts: &opts, theme: opts.Theme, keys: defaultGlobalKeys(), help: help.New(), w: fullW, h: fullH, now: time.Now}
	a.picker = newPicker(opts.Scenario, opts.Strategy)
	a.picker.servers = opts.Servers
	if opts.Replay != nil || opts.Loading != nil {
		if opts.Loading != nil {
			a.run = newRunView(loadingSession(opts.Name, opts.Loading), opts.Speed)
		} else {
			a.run = newRunView(replaySession(opts.Name, opts.Replay), opts.Speed)
		}
		a.run.pr.on = opts.Present
		a.run.pr.talkOpts(a.opts)
		a.run.mark = func(l string) {
			if a.rec != nil {
				a.rec.Marker(l)
			}
		}
		a.screen = screenRun
	}
	if opts.Talk != nil {
		a.startTalk()
	}
	return a
}

// Init starts the frame tick, and the run when it was asked for.
func (a *App) Init() tea.Cmd {
	if a.opts.Start && a.opts.Replay == nil && a.opts.Loading == nil && a.talk == nil {
		a.form = newForm(a.picker.scenario(), a.picker.strategy(), a.opts)
		spec, err := a.form.spec()
		if err == nil {
			spec.Manual, spec.Level = a.opts.Manual, a.opts.Level
			spec.Faults, spec.Steps = a.opts.Faults, a.opts.Steps
		}
		return tea.Batch(frame(), a.start(spec, err))
	}
	return frame()
}

func (a *App) shutdown() { a.stopRun() }

// stopRun stops the current run (its keys are deleted) and keeps what could
// not be deleted, to be said when the program ends.
func (a *App) stopRun() {
	if a.run == nil {
		return
	}
	if o := a.orig; o != nil {
		// The original of a branch goes with it.
		a.orig = nil
		run := a.run
		a.run = o
		a.stopRun()
		a.run = run
	}
	a.run.s.stop()
	if l := a.run.s.left; l != nil && !slices.Contains(a.left, l) {
		a.left = append(a.left, l)
	}
}

// quit ends the run (its keys are deleted) and the program.
func (a *App) quit() tea.Cmd {
	a.shutdown()
	return tea.Quit
}

func (a *App) start(spec runSpec, err error) tea.Cmd {
	if err != nil {
		a.err = untrusted.Line(err.Error())
		return nil
	}
	a.starting = true
	opts := a.opts
	return func() tea.Msg {
		s, err := startSession(opts, spec)
		return startedMsg{s, err}
	}
}

// Update routes messages to the current screen.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := a.update(msg)
	a.reportBeat()
	a.publishPosition()
	return m, cmd
}

func (a *App) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.w, a.h = msg.Width, msg.Height
		a.help.Width = msg.Width
		if a.rec != nil && (a.w != a.recW || a.h != a.recH) {
			a.rec.Resize(a.w, a.h)
			a.recW, a.recH = a.w, a.h
		}
		return a, nil
	case frameMsg:
		a.lastFrame = time.Time(msg)
		if a.flash != "" && a.lastFrame.After(a.flashUntil) {
			a.flash = ""
		}
		if a.run != nil && a.screen == screenRun {
			a.run.onFrame(time.Time(msg))
			if a.orig != nil {
				a.orig.s.finished() // its verdict, once it has one
				a.run.branchNote = a.branchLine()
			}
		}
		return a, frame()
	case startedMsg:
		a.starting = false
		if msg.err != nil {
			a.err = untrusted.Line(msg.err.Error())
			if a.screen == screenRun {
				a.screen = screenForm
			}
			return a, nil
		}
		var br *branchInfo
		if a.branching != nil {
			br, a.branching = a.branching, nil
			if a.orig == nil {
				a.orig = a.run // kept: tab shows it again
			} else {
				a.run.s.stop() // a branch of a branch replaces the branch
			}
			a.run = nil
		}
		if a.run != nil {
			a.stopRun()
		}
		present := a.opts.Present
		if a.run != nil {
			present = a.run.pr.on // a rerun keeps the mode
		}
		a.run = newRunView(msg.s, msg.s.spec.Speed)
		a.run.branch = br
		if br != nil && a.orig != nil {
			a.orig.fork = br
			a.orig.tl.Fork, a.run.tl.Fork = br.t, br.t
		}
		a.run.pr.on = present
		a.run.pr.talkOpts(a.opts)
		if a.rec != nil {
			a.run.mark = a.rec.Marker
		}
		a.onSceneRun()
		a.screen, a.err = screenRun, ""
		return a, nil
	case tea.KeyMsg:
		return a.handleKey(msg)
	case dotTapMsg:
		return a.dotTapped(msg)
	}
	return a, nil
}

func (a *App) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		return a, a.quit()
	}
	if done, cmd := a.handleStageKey(msg); done {
		return a, cmd
	}
	editing := a.screen == screenForm
	if !editing {
		switch {
		case key.Matches(msg, a.keys.Quit):
			return a, a.quit()
		case key.Matches(msg, a.keys.Help):
			a.showHelp = !a.showHelp
			return a, nil
		case key.Matches(msg, a.keys.Theme):
			a.theme = themes.Next(a.theme)
			a.flash, a.flashUntil = "theme: "+a.theme.Name+" (t for the next one)", a.lastFrame.Add(flashFor)
			return a, nil
		}
	}
	if a.showHelp && msg.String() == "esc" {
		a.showHelp = false
		return a, nil
	}
	if a.talk != nil || a.screen == screenRun {
		_, cmd := press(msg, a.controllers()...)
		return a, cmd
	}
	switch a.screen {
	case screenPicker:
		if a.picker.handleKey(msg) {
			if need := a.picker.need(); need != "" {
				a.err = need + " (quit and start locklab with it)"
				return a, nil
			}
			a.form = newForm(a.picker.scenario(), a.picker.strategy(), a.opts)
			a.screen, a.err = screenForm, ""
		}
	case screenForm:
		switch a.form.handleKey(msg) {
		case formBack:
			a.screen, a.err = screenPicker, ""
		case formRun:
			return a, a.start(a.form.spec())
		}
	}
	return a, nil
}

// controllers are the modes of the screen of a talk or a run, in the order
// a key goes to them.
func (a *App) controllers() []controller {
	if t := a.talk; t != nil && (t.card || t.end || a.run == nil) {
		return []controller{stageCtl{a}, talkCtl{a}}
	}
	v := a.run
	// The stage has had the key already (handleKey); it is here for help.
	cs := []controller{stageCtl{a}, faultCtl{v}}
	if a.talk != nil {
		cs = append(cs, talkCtl{a})
	}
	cs = append(cs, presentCtl{v, a}, schedCtl{v}, playCtl{v}, runCtl{v})
	if v.s.replay != "" {
		return append(cs, replayCtl{a})
	}
	return append(cs, liveCtl{a})
}

// View draws the current screen with the help footer, on the theme's own
// background.
func (a *App) View() string {
	th := a.theme
	if (a.talk != nil || a.screen == screenRun && a.run != nil && a.run.pr.on) && th.Name != "mono" {
		th = presentTheme // reads from the back of the room
	}
	if a.onStage() && a.blank {
		return draw.Backdrop(th, strings.Repeat("\n", max(a.h-1, 0)), a.w) // dark: the room looks at the speaker
	}
	return draw.Backdrop(th, a.view(th), a.w)
}

func (a *App) view(th *themes.Theme) string {
	if a.w < minW || a.h < minH {
		return draw.TooSmall(th, a.w, a.h)
	}
	var body string
	var keys helpMap
	switch {
	case a.talk != nil && (a.talk.card || a.talk.end || a.run == nil):
		body, keys = a.talkView(th, a.w, a.h-1), helpOf(a.controllers())
	case a.screen == screenPicker:
		body, keys = a.picker.View(th, a.w, a.h-2), a.picker.helpKeys()
	case a.screen == screenForm:
		body, keys = a.form.View(th, a.w, a.h-2), a.form.helpKeys()
	case a.screen == screenRun:
		body, keys = a.run.View(th, a.w, a.h-1), helpOf(a.controllers())
	}
	g := a.keys
	if a.screen == screenForm {
		g.Quit = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
		g.Theme.SetEnabled(false)
		g.Help.SetEnabled(false)
	}
	if a.onStage() {
		g.Quit = bind([]string{"q"}, "q q", "quit")
	}
	short := append(keys.short, g.Theme) // the theme goes first when room is short
	keys.full = append(keys.full, []key.Binding{g.Theme, g.Help, g.Quit})
	if a.showHelp {
		return a.helpView(th, keys)
	}
	footer := footerView(th, short, []key.Binding{g.Help, g.Quit}, a.w)
	if a.recording {
		footer = ""
	}
	if a.err != "" {
		footer = th.Alarm.Render(a.err)
	} else if a.flash != "" {
		footer = th.Accent.Render(a.flash)
	} else if a.starting {
		footer = th.Accent.Render("starting…")
	} else if a.onStage() && a.quitAsked {
		footer = th.Warn.Render("q again to quit · any other key goes on with the talk")
	}
	lines := strings.Split(body, "\n")
	height := a.h - 1
	if len(lines) > height {
		lines = lines[:height]
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	if a.screen == screenRun && a.run != nil && a.run.faults.open {
		// The menu covers the bottom of the run view, above the footer.
		panel := a.run.faults.panel(th, a.w)
		copy(lines[max(height-len(panel), 0):], panel)
	}
	return strings.Join(lines, "\n") + "\n" + draw.Fit(footer, a.w)
}

func newSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) % 1_000_000
}
