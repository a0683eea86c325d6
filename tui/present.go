package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// presentKeys are what presenter remotes send: → / PgDn / space / . go on,
// ← / PgUp go back a beat.
type presentKeys struct {
	Next, Prev, Toggle key.Binding
}

func defaultPresentKeys() presentKeys {
	return presentKeys{
		Next:   bind([]string{"right", "pgdown", " ", "."}, "→/space", "next beat"),
		Prev:   bind([]string{"left", "pgup", ","}, "←", "previous beat"),
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
}

// beats are the seqs of the beat markers folded so far.
func (v *runView) beats() []int64 {
	var bs []int64
	for _, m := range v.tl.Markers {
		if m.Kind == timeline.MarkerBeat {
			bs = append(bs, m.Seq)
		}
	}
	return bs
}

// nextBeat is the first beat after seq, up to limit.
func (v *runView) nextBeat(seq int64, limit int) (int64, bool) {
	for _, m := range v.tl.Markers {
		if m.Kind == timeline.MarkerBeat && m.Seq > seq && int(m.Seq) <= limit {
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

// handlePresentKey handles the presenter's keys; false lets the run view
// have the key.
func (v *runView) handlePresentKey(msg tea.KeyMsg) bool {
	k := v.pr.keys
	switch {
	case key.Matches(msg, k.Toggle):
		v.togglePresent()
	case !v.pr.on:
		return false
	case key.Matches(msg, k.Next):
		v.presentNext()
	case key.Matches(msg, k.Prev):
		v.presentPrev()
	default:
		return false
	}
	return true
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

// captionBox is the caption, large: bold, wrapped, centred in a box, with
// a title (which beat) and a hint (what the keys do now).
func captionBox(th *themes.Theme, title, text, hint string, w int) []string {
	inner := max(w-8, 20)
	wrapped := strings.Split(ansi.Wordwrap(text, inner, ""), "\n")
	lines := []string{""}
	for _, l := range wrapped {
		pad := (w - 2 - ansi.StringWidth(l)) / 2
		lines = append(lines, strings.Repeat(" ", max(pad, 0))+th.Title.Render(l))
	}
	lines = append(lines, "", strings.Repeat(" ", max((w-2-ansi.StringWidth(hint))/2, 0))+th.Muted.Render(hint))
	return strings.Split(box(th, title, lines, w, len(lines)+2), "\n")
}

// presentHint says what the presenter's keys do now.
func (v *runView) presentHint(k int) string {
	switch {
	case v.noHints:
		return ""
	case v.scene != nil && v.s.finished() && v.presenterState().Last:
		return "→ the next scene · ← goes back a beat"
	case k >= v.tl.N-1 && v.s.finished():
		return "the end of the run · ← goes back a beat · r runs it again"
	case v.pr.waiting:
		return "→ next · ← back · p leaves presenter mode"
	case v.paused:
		return "→ or space plays on to the next beat"
	}
	return "playing — it stops at the next beat"
}

// renderPresent is the presenter's layout: the caption on top, then the
// lanes, the locks and the stock, large enough to read from the back of a
// room at 100×30.
func (v *runView) renderPresent(th *themes.Theme, k int, now time.Duration, w, h int) string {
	st := v.presenterState()
	title, text := fmt.Sprintf("beat %d of %d", st.Index, st.Total), st.Caption
	if st.Extra != "" {
		text += "\n" + st.Extra
	}
	if text == "" {
		title, text = fmt.Sprintf("beat 0 of %d", st.Total), v.s.header.Scenario+" · "+v.s.header.Strategy+" — the first beat is coming"
	}
	capt := captionBox(th, title, text, v.presentHint(k), w)
	verdict := v.verdict(th, k, w)
	bodyH := h - 1 - len(capt) - len(verdict) - 1
	lockRows := min(2*len(v.tl.Locks), 6)
	lockH := 0
	if lockRows > 0 {
		lockH = lockRows + 2
	}
	laneH := max(bodyH-lockH, 3)
	labelW := labelWidth(v.tl, laneH-3)
	var b strings.Builder
	b.WriteString(fit(v.header(th, k, now, w), w))
	for _, l := range capt {
		b.WriteString("\n" + l)
	}
	b.WriteString("\n" + box(th, "swimlanes", lanes(th, v.tl, k, now, w-2, labelW, laneH-2, v.scroll), w, laneH))
	if lockH > 0 {
		b.WriteString("\n" + box(th, "locks", lockLanes(th, v.tl, k, now, w-2, labelW, lockRows), w, lockH))
	}
	line := gaugeLine(th, v.tl, k)
	if cyc := waitGraph(th, v.tl, k, w, 1); len(cyc) > 2 {
		line = cyc[2] // a deadlock: the cycle says more than the stock
	}
	b.WriteString("\n" + fit(line, w))
	for _, l := range verdict {
		b.WriteString("\n" + fit(l, w))
	}
	return b.String()
}
