package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/timeline"
)

// playCtl is playback, the same live and in replay: the keys that move the
// playhead and change its pace.
type playCtl struct{ v *runView }

// playKeys move the playhead and change its pace.
type playKeys struct {
	Pause, StepFwd, StepBack, SeekBack, SeekFwd, PrevMark, NextMark key.Binding
	Faster, Slower, Start, Live                                     key.Binding
}

func defaultPlayKeys() playKeys {
	return playKeys{
		Pause:    bind([]string{" "}, "space", "pause"),
		StepFwd:  bind([]string{"."}, ".", "step"),
		StepBack: bind([]string{","}, ",", "step back"),
		SeekBack: bind([]string{"left"}, "←", "seek back"),
		SeekFwd:  bind([]string{"right"}, "→", "seek"),
		PrevMark: bind([]string{"["}, "[", "prev marker"),
		NextMark: bind([]string{"]"}, "]", "next marker"),
		Faster:   bind([]string{"+", "="}, "+", "faster"),
		Slower:   bind([]string{"-", "_"}, "-", "slower"),
		Start:    bind([]string{"home"}, "home", "start"),
		Live:     bind([]string{"end"}, "end", "live"),
	}
}

func (c playCtl) keys() []binding {
	v, k := c.v, c.v.pkeys
	end := k.Live
	if v.recorded() {
		end.SetHelp("end", "to the end")
	}
	return []binding{
		{k.Pause, footPause, act(v.togglePause)},
		{k.StepFwd, footStepFwd, act(func() { v.step(1) })},
		{k.StepBack, footStepBack, act(func() { v.step(-1) })},
		{k.SeekBack, footSeekBack, act(func() { v.seek(-1) })},
		{k.SeekFwd, footSeekFwd, act(func() { v.seek(1) })},
		{k.PrevMark, footPrevMark, act(func() { v.marker(-1) })},
		{k.NextMark, footNextMark, act(func() { v.marker(1) })},
		{k.Faster, footFaster, act(func() { v.changeSpeed(1) })},
		{k.Slower, footSlower, act(func() { v.changeSpeed(-1) })},
		{k.Start, footStart, act(v.toStart)},
		{end, footNone, act(v.toLive)},
	}
}

func (v *runView) togglePause() {
	if v.recorded() {
		v.status = ""
		switch {
		case v.atEnd(): // at the end: play again from the start
			v.follow, v.paused, v.cursor, v.playT = false, false, -1, 0
		case v.paused:
			v.follow, v.paused = false, false
			v.playT = max(v.playT, v.eventT(v.cursor))
		default:
			v.paused = true
		}
		return
	}
	if !v.follow {
		v.toLive() // a rewound live run goes back to the present
		return
	}
	if !v.paused {
		v.playT = v.now()
	}
	v.paused = !v.paused
	v.pauseWorld(v.paused)
	v.stepping = false
}

func (v *runView) step(d int) {
	if !v.recorded() && d > 0 && v.cursor >= v.tl.N-1 && v.s.embedded() {
		// At the newest event of a live run: hold the view there and let
		// the world make one more.
		if v.follow && !v.paused {
			v.playT = v.now()
		}
		v.follow, v.paused, v.stepping = true, true, true
		v.pauseWorld(false)
		return
	}
	v.holdLive()
	v.paused = true
	v.cursor = min(max(v.cursor+d, -1), v.tl.N-1)
	v.playT = v.eventT(v.cursor)
}

// seek moves the playhead by a fixed share of the visible time window,
// whatever events lie there: gaps are crossed like anything else.
func (v *runView) seek(dir int) {
	edge := v.edge()
	stride := max(edge/seekShare, time.Microsecond)
	target := min(max(v.now()+time.Duration(dir)*stride, 0), edge)
	if dir > 0 && target >= edge && !v.recorded() {
		v.toLive()
		return
	}
	v.holdLive()
	v.moveTo(target)
}

// moveTo puts the playhead at t and the cursor on the last event at or
// before it.
func (v *runView) moveTo(t time.Duration) {
	v.playT = t
	v.cursor = v.lastAtOrBefore(t)
	if v.recorded() && t >= v.endT() {
		v.cursor = v.tl.N - 1
	}
	v.status = ""
}

// toStart puts the playhead at the start of the run.
func (v *runView) toStart() {
	v.holdLive()
	v.moveTo(0)
	v.cursor = -1
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
	v.holdLive()
	v.paused = true
	v.cursor = target
	v.playT = v.eventT(target)
	v.status = fmt.Sprintf("%s at %s (event %d)", markerName(kind), draw.Dur(v.playT), target+1)
}

// changeSpeed steps through the ladder, at any moment: a live run's world
// (embedded) follows at once; a recording plays on at the new speed.
func (v *runView) changeSpeed(d int) {
	if !v.recorded() && !v.s.embedded() {
		v.status = "a real Redis server keeps its own time: --slowmo sets its pace"
		return
	}
	if why := scenario.KeepsOneX(v.s.spec.Strategy); why != "" && !v.recorded() {
		v.status = why + " (its recording replays at any speed)"
		return
	}
	i := 0
	for j, s := range speeds {
		if s <= v.speed*1.0001 {
			i = j
		}
	}
	i = min(max(i+d, 0), len(speeds)-1)
	v.speed = speeds[i]
	if !v.recorded() && !v.paused {
		v.pauseWorld(false)
	}
}

// toLive goes to the newest event: a live run's present (its world thawed),
// a recording's end.
func (v *runView) toLive() {
	v.status = ""
	if v.recorded() {
		v.follow, v.paused = false, true
		v.cursor, v.playT = v.tl.N-1, v.endT()
		return
	}
	v.follow, v.paused, v.stepping = true, false, false
	v.pauseWorld(false)
	v.cursor = v.tl.N - 1
}
