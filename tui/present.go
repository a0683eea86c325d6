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
	v       *runView // the run view it presents
	on      bool
	keys    presentKeys
	at      int64                // the beat shown (its event's seq), −1 before the first
	waiting bool                 // stopped at the beat
	ids     []string             // the beats the run can tell (scenario.BeatIDs)
	extras  map[string]BeatExtra // a talk's additions (Options.Extras)
	talk    bool                 // → after the last beat goes on (Options.AfterLast)
	big     bigCache             // headlines in block letters
}

// isStop reports whether marker m is a beat the presenter stops at: one the
// story tells (it has an ID). A beat without one — a fault's or a script's
// note — shows under the caption instead.
func (p *presenter) isStop(m timeline.Marker) bool {
	v := p.v
	return m.Kind == timeline.MarkerBeat && v.s.log.At(int(m.Seq)).Code != ""
}

// beats are the seqs of the beat markers folded so far.
func (p *presenter) beats() []int64 {
	v := p.v
	var bs []int64
	for _, m := range v.tl.Markers {
		if p.isStop(m) {
			bs = append(bs, m.Seq)
		}
	}
	return bs
}

// nextBeat is the first beat after seq, up to limit.
func (p *presenter) nextBeat(seq int64, limit int) (int64, bool) {
	v := p.v
	for _, m := range v.tl.Markers {
		if m.Seq > seq && int(m.Seq) <= limit && p.isStop(m) {
			return m.Seq, true
		}
	}
	return 0, false
}

// stopAt holds the view (and, on the embedded store, the world) at the
// beat event seq.
func (p *presenter) stopAt(seq int64) {
	v := p.v
	p.at, p.waiting = seq, true
	v.follow, v.paused, v.stepping = false, true, false
	if v.s.live() && !v.s.finished() {
		v.pauseWorld(true)
	}
	v.cursor = int(seq)
	v.playT = v.eventT(v.cursor)
	v.status = ""
}

// frame stops at the first beat the frame would move past; true if
// it did.
func (p *presenter) frame(target int) bool {
	v := p.v
	if !p.on || p.waiting {
		return p.on && p.waiting
	}
	if b, ok := p.nextBeat(max(p.at, int64(v.cursor)), target); ok {
		p.stopAt(b)
		return true
	}
	return false
}

// next goes on from a beat. A replay plays on to the next beat; a
// live run rewound to an earlier beat jumps to the next one it has already
// had, and otherwise goes back into the run.
func (p *presenter) next() {
	v := p.v
	from := max(p.at, int64(v.cursor))
	if b, ok := p.nextBeat(from, v.tl.N-1); ok && !v.recorded() && p.rewound() {
		p.stopAt(b)
		return
	}
	p.waiting = false
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

// rewound reports whether the view stands at a beat earlier than the
// newest one already folded: going on then means the next beat in history.
func (p *presenter) rewound() bool {
	bs := p.beats()
	return len(bs) > 0 && p.at < bs[len(bs)-1]
}

// prev goes back a beat.
func (p *presenter) prev() {
	v := p.v
	bs := p.beats()
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i] < p.at || (!p.waiting && bs[i] < int64(v.cursor)) {
			p.stopAt(bs[i])
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
	next := act(v.pr.next)
	if a != nil {
		next = func(tea.KeyMsg) tea.Cmd { return a.PresentNext() }
	}
	leave := k.Toggle
	leave.SetHelp("p", "leave presenter")
	return []binding{
		{k.Next, footBeatNext, next},
		{k.Prev, footBeatPrev, act(v.pr.prev)},
		{k.Stay, footNone, act(func() {})},
		{leave, footLeave, act(v.pr.toggle)},
	}
}

func (p *presenter) toggle() {
	v := p.v
	p.on = !p.on
	p.waiting = false
	p.at = int64(v.cursor)
	if p.on {
		v.status = "presenter mode: the run stops at each beat — → goes on, ← goes back"
	} else {
		v.status = ""
	}
}
