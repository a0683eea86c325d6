package tui

import (
	"fmt"
	"sort"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/tui/timeline"
)

// speeds are the steps of + and -.
var speeds = []float64{0.1, 0.25, 0.5, 1, 2, 4, 10}

// mode is what the header badge says.
func (v *runView) mode() string {
	switch {
	case v.s.replay != "" && !v.paused && v.cursor < v.tl.N-1:
		return "PLAYING"
	case v.s.replay != "" && v.cursor >= v.tl.N-1:
		return "END"
	case v.paused:
		return "PAUSED"
	case !v.follow && v.cursor < v.tl.N-1:
		return "REWOUND"
	case v.s.finished() && v.cursor >= v.tl.N-1:
		return "DONE"
	case v.s.replay != "":
		return "END"
	}
	return "LIVE"
}

// onFrame folds new events and moves the cursor: once per frame, never
// per event.
func (v *runView) onFrame(now time.Time) {
	defer v.markPassed()
	elapsed := time.Duration(0)
	if !v.lastFrame.IsZero() {
		elapsed = now.Sub(v.lastFrame)
	}
	v.lastFrame = now
	v.tl.Catch(v.s.log)
	if v.faults.open && v.s.finished() {
		v.faults.open = false
	}
	if v.s.replay != "" {
		if !v.paused && v.cursor < v.tl.N-1 {
			v.playT += time.Duration(float64(elapsed) * v.speed)
			target := v.lastAtOrBefore(v.playT)
			if v.presentFrame(target) {
				return
			}
			v.cursor = target
		}
		return
	}
	if v.stepping && v.tl.N-1 > v.cursor {
		v.stepping = false
		v.pauseWorld(true)
		v.cursor++
		return
	}
	if v.follow && !v.paused {
		if v.presentFrame(v.tl.N - 1) {
			return
		}
		v.cursor = v.tl.N - 1
	}
	if v.s.finished() && v.paused && v.s.embedded() {
		v.pauseWorld(false) // nothing left to freeze
	}
}

// now is the virtual time at the right edge of the lanes.
func (v *runView) now() time.Duration {
	if v.s.replay != "" && !v.paused && v.cursor < v.tl.N-1 {
		return v.playT
	}
	if v.s.live() && v.follow && !v.paused && !v.s.finished() {
		if c := v.s.clock(); c != nil {
			return max(c.Now(), v.tl.Last)
		}
	}
	if c := v.s.clock(); c != nil && v.paused && v.follow && v.s.embedded() {
		return max(c.Now(), v.eventT(v.cursor))
	}
	return v.eventT(v.cursor)
}

func (v *runView) eventT(i int) time.Duration {
	if i < 0 || i >= v.s.log.Len() {
		return 0
	}
	return v.s.log.At(i).T
}

// lastAtOrBefore is the index of the last event at or before t.
func (v *runView) lastAtOrBefore(t time.Duration) int {
	n := v.tl.N
	return sort.Search(n, func(i int) bool { return v.s.log.At(i).T > t }) - 1
}

// pauseWorld freezes (or thaws) the embedded world: workers and TTLs.
func (v *runView) pauseWorld(pause bool) {
	c := v.s.clock()
	if c == nil || !v.s.embedded() {
		return
	}
	if pause {
		_ = c.SetSpeed(0)
	} else {
		_ = c.SetSpeed(v.speed)
	}
}

// handleKey handles the run view's keys; the bool says whether it did.
func (v *runView) handleKey(msg tea.KeyMsg) (bool, tea.Cmd) {
	if v.handlePresentKey(msg) {
		return true, nil
	}
	k := v.keys
	switch {
	case key.Matches(msg, k.Pause):
		v.togglePause()
	case key.Matches(msg, k.StepFwd):
		v.step(1)
	case key.Matches(msg, k.StepBack):
		v.step(-1)
	case key.Matches(msg, k.SeekBack):
		v.seek(-1)
	case key.Matches(msg, k.SeekFwd):
		v.seek(1)
	case key.Matches(msg, k.PrevMark):
		v.marker(-1)
	case key.Matches(msg, k.NextMark):
		v.marker(1)
	case key.Matches(msg, k.Faster):
		v.changeSpeed(1)
	case key.Matches(msg, k.Slower):
		v.changeSpeed(-1)
	case key.Matches(msg, k.Live):
		v.toLive()
	case key.Matches(msg, k.Save):
		v.saveLog()
	case key.Matches(msg, k.Faults):
		v.openFaults()
	case key.Matches(msg, k.ScrollUp):
		v.scroll = max(v.scroll-1, 0)
	case key.Matches(msg, k.ScrollDown):
		v.scroll++
	default:
		return false, nil
	}
	return true, nil
}

func (v *runView) togglePause() {
	if v.s.replay != "" {
		v.status = ""
		switch {
		case v.cursor >= v.tl.N-1: // at the end: play again from the start
			v.paused, v.cursor, v.playT = false, -1, 0
		case v.paused:
			v.paused = false
			v.playT = max(v.playT, v.eventT(v.cursor))
		default:
			v.paused = true
		}
		return
	}
	v.paused = !v.paused
	if !v.s.finished() {
		v.pauseWorld(v.paused)
	}
	if !v.paused {
		v.follow, v.stepping = true, false
	}
}

func (v *runView) step(d int) {
	if !v.paused {
		v.paused = true
		if v.s.live() && !v.s.finished() {
			v.pauseWorld(true)
		}
	}
	v.follow = false
	next := v.cursor + d
	switch {
	case next < -1:
		next = -1
	case next > v.tl.N-1:
		// At the newest event of a paused live run: let the world make one more.
		if v.s.embedded() && !v.s.finished() {
			v.stepping = true
			v.pauseWorld(false)
		}
		next = v.tl.N - 1
	}
	v.cursor = next
	v.playT = v.eventT(v.cursor)
}

// seek moves by a twentieth of the run so far.
func (v *runView) seek(dir int) {
	span := max(v.tl.Last, time.Millisecond)
	target := v.eventT(v.cursor) + time.Duration(dir)*span/20
	v.follow = false
	if v.s.replay == "" && !v.paused {
		v.paused = true
		v.pauseWorld(true)
	}
	if target < 0 {
		v.cursor = -1
	} else {
		v.cursor = v.lastAtOrBefore(target)
	}
	v.playT = max(target, 0)
}

func (v *runView) marker(dir int) {
	ms := v.tl.Markers
	if len(ms) == 0 {
		v.status = "no markers in this run"
		return
	}
	target, kind := -1, timeline.MarkerKind(0)
	if dir > 0 {
		for _, m := range ms {
			if int(m.Seq) > v.cursor {
				target, kind = int(m.Seq), m.Kind
				break
			}
		}
	} else {
		for i := len(ms) - 1; i >= 0; i-- {
			if int(ms[i].Seq) < v.cursor {
				target, kind = int(ms[i].Seq), ms[i].Kind
				break
			}
		}
	}
	if target < 0 {
		v.status = "no more markers that way"
		return
	}
	if v.s.replay == "" && !v.paused {
		v.paused = true
		v.pauseWorld(true)
	}
	if v.s.replay != "" {
		v.paused = true
	}
	v.follow, v.cursor = false, target
	v.playT = v.eventT(target)
	v.status = fmt.Sprintf("%s at %s (event %d)", markerName(kind), dur(v.playT), target+1)
}

func (v *runView) changeSpeed(d int) {
	i := 0
	for j, s := range speeds {
		if s <= v.speed {
			i = j
		}
	}
	i = min(max(i+d, 0), len(speeds)-1)
	v.speed = speeds[i]
	if v.s.live() && !v.paused && !v.s.finished() {
		v.pauseWorld(false)
	}
}

func (v *runView) toLive() {
	if v.s.replay != "" {
		v.cursor, v.paused = v.tl.N-1, true
		return
	}
	v.follow, v.paused, v.stepping = true, false, false
	if !v.s.finished() {
		v.pauseWorld(false)
	}
	v.cursor = v.tl.N - 1
}

func (v *runView) saveLog() {
	sp := v.s.spec
	path := fmt.Sprintf("locklab-%s-%s-%d.jsonl", sp.Scenario, sp.Strategy, sp.Seed)
	if err := v.s.save(path); err != nil {
		v.status = "could not save: " + err.Error()
		return
	}
	v.status = fmt.Sprintf("saved %d events to %s", v.s.log.Len(), path)
}
