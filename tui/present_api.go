package tui

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
)

// PresenterState is where presenter mode stands: the beat on screen, how
// many the run tells, and what a talk added to it.
type PresenterState struct {
	On      bool   // presenter mode is on
	Index   int    // the beat shown, from 1; 0 before the first
	Total   int    // how many beats the run tells, known from the first
	ID      string // the beat's ID: a scenario.Beat's, or scenario.BeatVerdict
	Caption string // the beat's caption, as the run said it
	Extra   string // the caption a talk adds under it (Options.Extras)
	Notes   string // the speaker's notes for it (Options.Extras)
	NextID  string // the ID of the beat that comes next; "" after the last
	Last    bool   // the run's last beat: → from here calls Options.AfterLast
	Waiting bool   // the run stands at the beat until → is pressed
}

// BeatExtra is what a talk adds to one beat: a caption shown under the
// run's own, and notes for the speaker's eyes only.
type BeatExtra struct {
	Caption, Notes string
}

// extraFor is the extra for the beat numbered n (from 1) with id: by ID
// first, then by number.
func extraFor(extras map[string]BeatExtra, id string, n int) BeatExtra {
	if x, ok := extras[id]; ok && id != "" {
		return x
	}
	return extras[strconv.Itoa(n)]
}

// Presenter is presenter mode's state now; the zero state when no run is
// on screen.
func (a *App) Presenter() PresenterState {
	if a.run == nil || a.screen != screenRun {
		return PresenterState{}
	}
	return a.run.pr.state()
}

// PresentNext does what → does in presenter mode: on to the next beat, or,
// at the run's last beat, Options.AfterLast's command.
func (a *App) PresentNext() tea.Cmd {
	if a.run == nil || a.screen != screenRun {
		return nil
	}
	if st := a.run.pr.state(); st.On && st.Last && a.run.recorded() && a.opts.AfterLast != nil {
		return a.opts.AfterLast()
	}
	a.run.pr.next()
	return nil
}

// PresentBack does what ← does in presenter mode: back to the previous beat.
func (a *App) PresentBack() {
	if a.run != nil && a.screen == screenRun {
		a.run.pr.prev()
	}
}

// reportBeat calls Options.OnBeat when the beat on screen changed.
func (a *App) reportBeat() {
	if a.opts.OnBeat == nil {
		return
	}
	st := a.Presenter()
	if st != a.reported {
		a.reported = st
		a.opts.OnBeat(st)
	}
}

// state is the beat at the cursor, counted against the beats the
// run can tell.
func (p *presenter) state() PresenterState {
	v := p.v
	st := PresenterState{On: p.on, Waiting: p.waiting}
	seq, said := -1, 0
	for _, m := range v.tl.Markers {
		if !p.isStop(m) {
			continue
		}
		if said++; int(m.Seq) <= v.cursor {
			st.Index, seq = said, int(m.Seq)
		}
	}
	st.Total = said
	if !v.recorded() {
		st.Total = max(said, len(p.ids)) // more are coming
	}
	if seq >= 0 {
		e := v.s.log.At(seq)
		st.ID, st.Caption = e.Code, e.Msg
	}
	x := extraFor(p.extras, st.ID, st.Index)
	st.Extra, st.Notes = x.Caption, x.Notes
	st.Last = st.Index > 0 && (st.ID == scenario.BeatVerdict || (v.recorded() && st.Index == st.Total))
	switch {
	case st.Last:
	case st.Index == 0 && len(p.ids) > 0:
		st.NextID = p.ids[0]
	default:
		for i, id := range p.ids {
			if id == st.ID && i+1 < len(p.ids) {
				st.NextID = p.ids[i+1]
			}
		}
	}
	return st
}

// presenting reports whether the run view is on screen in presenter mode.
func (a *App) presenting() bool {
	return a.screen == screenRun && a.run != nil && a.run.pr.on
}

// talkOpts takes a talk's additions from the options.
func (p *presenter) talkOpts(o *Options) {
	p.extras, p.talk = o.Extras, o.AfterLast != nil
}

// onStage reports whether a talk or presenter mode is on screen: a remote's
// keys are then the stage's.
func (a *App) onStage() bool {
	return a.talk != nil || a.presenting()
}

// stageCtl is what a remote may send on stage, before any screen sees it:
// b (or . held) blanks the screen and any key brings it back; . tapped
// goes on; q asks once. It is off while the fault menu is open.
type stageCtl struct{ a *App }

func (c stageCtl) on() bool {
	a := c.a
	return a.onStage() && !(a.run != nil && a.run.faults.open && a.screen == screenRun)
}

// open: a dark screen takes every key, and the first brings it back.
func (c stageCtl) open() bool { return c.on() && c.a.blank }

func (c stageCtl) rest(tea.KeyMsg) tea.Cmd {
	c.a.blank = false
	return nil
}

func (c stageCtl) keys() []binding {
	a := c.a
	if !c.on() {
		return nil
	}
	// "." and q are described by → ("→/space/.") and the footer ("q q").
	dot, quit := bind([]string{"."}, "", ""), bind([]string{"q"}, "", "")
	bs := []binding{{dot, footNone, func(msg tea.KeyMsg) tea.Cmd { return a.handleDot(max(dots(msg), 1)) }}}
	if a.blank {
		return bs
	}
	return append(bs,
		binding{quit, footNone, func(tea.KeyMsg) tea.Cmd {
			if a.quitAsked {
				return a.quit()
			}
			a.quitAsked = true
			return nil
		}},
		binding{defaultPresentKeys().Blank, footBlank, act(func() { a.blank = true })},
	)
}

// handleStageKey gives a key to the stage first; a key held down can come
// as one message of several "."s.
func (a *App) handleStageKey(msg tea.KeyMsg) (bool, tea.Cmd) {
	c := stageCtl{a}
	if !c.on() {
		return false, nil
	}
	if msg.String() != "q" {
		a.quitAsked = false
	}
	if n := dots(msg); n > 1 {
		return true, a.handleDot(n)
	}
	return press(msg, c)
}
