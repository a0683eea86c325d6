package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/tui/timeline"
)

// presentKeys are what presenter remotes send: → / PgDn / space / . go on,
// ← / PgUp go back a beat, b or . held (a remote's black-screen button, as
// in slide software) blanks the screen (present_dot.go tells . tapped from
// . held). Esc, F5 and Shift+F5 (a
// remote's start/stop button; Shift+F5 arrives as F17) do nothing: one
// click must never throw a speaker out of the talk.
type presentKeys struct {
	Next, Prev, Blank, Stay, Toggle key.Binding
}

func defaultPresentKeys() presentKeys {
	return presentKeys{
		Next:   bind([]string{"right", "pgdown", " "}, "→/space/.", "next beat"),
		Prev:   bind([]string{"left", "pgup", ","}, "←", "previous beat"),
		Blank:  bind([]string{"b"}, "b/. held", "blank screen"),
		Stay:   bind([]string{"esc", "f5", "f17"}, "esc/f5", "stay in the talk"),
		Toggle: bind([]string{"p"}, "p", "presenter"),
	}
}

// presenter is presenter mode's state: the run stops at each beat with its
// caption until the presenter goes on.
type presenter struct {
	on      bool
	keys    presentKeys
	at      int64                // the beat shown (its event's seq), −1 before the first
	waiting bool                 // stopped at the beat
	ids     []string             // the beats the run can tell (scenario.BeatIDs)
	extras  map[string]BeatExtra // a talk's additions (Options.Extras)
	talk    bool                 // → after the last beat goes on (Options.AfterLast)
}

// isStop reports whether marker m is a beat the presenter stops at: one the
// story tells (it has an ID). A beat without one — a fault's or a script's
// note — shows under the caption instead.
func (v *runView) isStop(m timeline.Marker) bool {
	return m.Kind == timeline.MarkerBeat && v.s.log.At(int(m.Seq)).Code != ""
}

// beats are the seqs of the beat markers folded so far.
func (v *runView) beats() []int64 {
	var bs []int64
	for _, m := range v.tl.Markers {
		if v.isStop(m) {
			bs = append(bs, m.Seq)
		}
	}
	return bs
}

// nextBeat is the first beat after seq, up to limit.
func (v *runView) nextBeat(seq int64, limit int) (int64, bool) {
	for _, m := range v.tl.Markers {
		if m.Seq > seq && int(m.Seq) <= limit && v.isStop(m) {
			return m.Seq, true
		}
	}
	return 0, false
}

// stopAtBeat holds the view (and, on the embedded store, the world) at the
// beat event seq.
func (v *runView) stopAtBeat(seq int64) {
	v.pr.at, v.pr.waiting = seq, true
	v.follow, v.paused, v.stepping = false, true, false
	if v.s.live() && !v.s.finished() {
		v.pauseWorld(true)
	}
	v.cursor = int(seq)
	v.playT = v.eventT(v.cursor)
	v.status = ""
}

// presentFrame stops at the first beat the frame would move past; true if
// it did.
func (v *runView) presentFrame(target int) bool {
	if !v.pr.on || v.pr.waiting {
		return v.pr.on && v.pr.waiting
	}
	if b, ok := v.nextBeat(max(v.pr.at, int64(v.cursor)), target); ok {
		v.stopAtBeat(b)
		return true
	}
	return false
}

// presentNext goes on from a beat. A replay plays on to the next beat; a
// live run rewound to an earlier beat jumps to the next one it has already
// had, and otherwise goes back into the run.
func (v *runView) presentNext() {
	from := max(v.pr.at, int64(v.cursor))
	if b, ok := v.nextBeat(from, v.tl.N-1); ok && !v.recorded() && v.rewoundBeat() {
		v.stopAtBeat(b)
		return
	}
	v.pr.waiting = false
	if v.recorded() {
		if v.cursor >= v.tl.N-1 {
			return
		}
		v.paused = false
		v.playT = max(v.playT, v.eventT(v.cursor))
		return
	}
	v.follow, v.paused = true, false
	if !v.s.finished() {
		v.pauseWorld(false)
	}
}

// rewoundBeat reports whether the view stands at a beat earlier than the
// newest one already folded: going on then means the next beat in history.
func (v *runView) rewoundBeat() bool {
	bs := v.beats()
	return len(bs) > 0 && v.pr.at < bs[len(bs)-1]
}

// presentPrev goes back a beat.
func (v *runView) presentPrev() {
	bs := v.beats()
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i] < v.pr.at || (!v.pr.waiting && bs[i] < int64(v.cursor)) {
			v.stopAtBeat(bs[i])
			return
		}
	}
	v.status = "this is the first beat"
}

// presentCtl is presenter mode: → goes on to the next beat (at the run's
// last, Options.AfterLast), ← back a beat, esc and F5 do nothing, p
// leaves (b and . are the stage's: stageCtl). a is nil in a room's view.
type presentCtl struct {
	v *runView
	a *App
}

func (c presentCtl) keys() []binding {
	v, a, k := c.v, c.a, c.v.pr.keys
	if !v.pr.on {
		return nil // p, which turns it on, is the run's (runCtl)
	}
	next := act(v.presentNext)
	if a != nil {
		next = func(tea.KeyMsg) tea.Cmd { return a.PresentNext() }
	}
	leave := k.Toggle
	leave.SetHelp("p", "leave presenter")
	return []binding{
		{k.Next, footBeatNext, next},
		{k.Prev, footBeatPrev, act(v.presentPrev)},
		{k.Stay, footNone, act(func() {})},
		{leave, footLeave, act(v.togglePresent)},
	}
}

func (v *runView) togglePresent() {
	v.pr.on = !v.pr.on
	v.pr.waiting = false
	v.pr.at = int64(v.cursor)
	if v.pr.on {
		v.status = "presenter mode: the run stops at each beat — → goes on, ← goes back"
	} else {
		v.status = ""
	}
}
