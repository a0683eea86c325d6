package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/timeline"
	"github.com/locklab/locklab/untrusted"
)

// speeds are the steps of + and -: log-spaced, from a millisecond per
// second to ten seconds per second.
var speeds = []float64{0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}

// seekShare is the share of the visible time window ← and → move the
// playhead by.
const seekShare = 20

// openingSpeed is the speed a run of scenario name with strategy and p
// opens at: the pace at which its story lasts 5–20 s on screen, or 1 for a
// scenario unknown to this build (a recording from another version).
func openingSpeed(name, strategy string, p event.Params) float64 {
	if sc, err := scenario.Lookup(name); err == nil {
		if s := sc.OpeningSpeed(strategy, p); s > 0 {
			return s
		}
	}
	return 1
}

// recorded reports whether the whole log is known: a replay, or a live run
// that has ended. The playhead then moves through the log the same way for
// both, at the view's speed.
// It is read at frame time: a run that ends between two frames stays live
// until the next frame has folded its last events, so the view never says
// DONE over a log it has not drawn to the end.
func (v *runView) recorded() bool { return v.over || v.s.run == nil }

// mode is what the header badge says.
func (v *runView) mode() string {
	if v.recorded() {
		switch {
		case v.atEnd() && v.s.loading != nil:
			return "LOADING"
		case v.atEnd() && v.s.replay != "":
			return "END"
		case v.atEnd():
			return "DONE"
		case v.paused:
			return "PAUSED"
		}
		return "PLAYING"
	}
	switch {
	case v.paused:
		return "PAUSED"
	case !v.follow && v.cursor < v.tl.N-1:
		return "REWOUND"
	}
	return "LIVE"
}

// atEnd reports whether a recorded run's playhead stands at its end.
func (v *runView) atEnd() bool {
	return v.cursor >= v.tl.N-1 && (v.follow || v.playT >= v.endT())
}

// endT is the time of the newest event.
func (v *runView) endT() time.Duration { return v.eventT(v.tl.N - 1) }

// lateFrames is the most frames' worth of time one frame stands for in
// playback.
const lateFrames = 4

// onFrame folds new events and moves the cursor: once per frame, never
// per event.
func (v *runView) onFrame(now time.Time) {
	defer v.markPassed()
	elapsed := time.Duration(0)
	if !v.lastFrame.IsZero() {
		// A late frame moves the playhead as far as a frame on time
		// would at most: a busy machine slows playback, never skips it.
		elapsed = min(now.Sub(v.lastFrame), lateFrames*max(v.frameStep, frameEvery))
	}
	v.lastFrame = now
	done := v.s.finished() // before the fold: a finished run's last events are all in it
	if v.shared != nil {
		// The stage folds the round (Stage.catchUp): it is over here once
		// its last events are in the fold.
		done = done && v.tl.N >= v.s.log.Len()
	} else {
		v.tl.Catch(v.s.log)
	}
	if m := v.s.man; m != nil && v.tl.N > v.seen {
		m.checkWin(v.s.run, v.seen, v.tl.N)
		v.seen = v.tl.N
	}
	v.over = done
	if done {
		v.stepping = false // an open fault menu stays open (and modal) until esc
	}
	if done && v.follow {
		if !v.paused && v.presentFrame(v.tl.N-1) {
			return
		}
		v.ended() // the live run just ended: from now on it is a recording
		return
	}
	if v.s.loadErr != nil && !v.loadNoted {
		v.loadNoted = true
		v.status = fmt.Sprintf("%d events shown, no verdict — %s: %v", v.tl.N, v.s.replay, v.s.loadErr)
	}
	if done || v.s.loading != nil {
		v.play(elapsed) // a replay plays while the rest of it is read
		return
	}
	if v.stepping && v.tl.N-1 > v.cursor {
		v.stepping = false
		v.pauseWorld(true)
		v.cursor++
		v.playT = v.eventT(v.cursor)
		return
	}
	if v.follow && !v.paused {
		if v.presentFrame(v.tl.N - 1) {
			return
		}
		v.cursor = v.tl.N - 1
	}
}

// ended turns a live run that just ended into a recording, its playhead at
// the end.
func (v *runView) ended() {
	v.follow, v.paused = false, true
	v.cursor = v.tl.N - 1
	v.playT = v.endT()
	v.setKeys()
}

// play moves a recording's playhead by one frame's worth of virtual time.
func (v *runView) play(elapsed time.Duration) {
	if v.paused || v.follow {
		return
	}
	end := v.endT()
	v.playT = min(v.playT+time.Duration(float64(elapsed)*v.speed), end)
	target := max(v.lastAtOrBefore(v.playT), v.cursor)
	if v.presentFrame(target) {
		return
	}
	v.cursor = target
	if v.playT >= end && v.s.loading == nil {
		v.cursor, v.paused = v.tl.N-1, true
	}
}

// now is the playhead: the virtual time at the right edge of the lanes.
func (v *runView) now() time.Duration {
	if v.follow && !v.recorded() {
		if c := v.s.clock(); c != nil && (!v.paused || v.s.embedded()) {
			return max(c.Now(), v.tl.Last)
		}
		return v.eventT(v.cursor)
	}
	return v.playT
}

// edge is the newest time there is: a live run's clock, a recording's end.
func (v *runView) edge() time.Duration {
	if c := v.s.clock(); c != nil && !v.recorded() {
		return max(c.Now(), v.tl.Last)
	}
	return max(v.tl.Last, v.endT())
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
	if c == nil || !v.s.embedded() || v.recorded() {
		return
	}
	if pause {
		_ = c.SetSpeed(0)
	} else {
		_ = c.SetSpeed(v.speed)
	}
}

// holdLive stops a live run's view where it is (and, embedded, its world)
// before the playhead leaves the newest event.
func (v *runView) holdLive() {
	if v.recorded() {
		if v.follow {
			v.ended() // the run ended since the last frame: a recording now, paused
		}
		v.follow = false
		return
	}
	if v.follow {
		v.playT = v.now()
	}
	v.follow, v.stepping = false, false
	if !v.paused {
		v.paused = true
		v.pauseWorld(true)
	}
}

// handleKey handles the run view's keys; the bool says whether it did.
func (v *runView) handleKey(msg tea.KeyMsg) (bool, tea.Cmd) {
	if v.scheduling() && v.handleManualKey(msg) {
		return true, nil
	}
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
	case key.Matches(msg, k.Start):
		v.toStart()
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

// pace says how the run's pace is set, for the header: a virtual clock's
// speed, a real server's real time (stretched by --slowmo), or a
// recording's playback speed.
func (v *runView) pace() string {
	sp := strconv.FormatFloat(v.speed, 'f', -1, 64) + "×"
	switch {
	case v.s.replay != "":
		return sp + " replay"
	case v.s.live() && !v.s.embedded() && !v.recorded():
		if sm := v.s.header.Slowmo; sm > 1 {
			return "real time · slowmo " + strconv.FormatFloat(sm, 'g', -1, 64) + "×"
		}
		return "real time"
	case v.recorded():
		return sp + " playback"
	case v.s.header.Time == scenario.TimeSimulated:
		return sp + " simulated"
	}
	return sp + " real time" // the embedded store, asked for real time (or a story that needs it)
}

func (v *runView) saveLog() {
	sp := v.s.spec
	path := fmt.Sprintf("locklab-%s-%s-%d.jsonl", sp.Scenario, sp.Strategy, sp.Seed)
	if v.branch != nil {
		path = fmt.Sprintf("locklab-%s-%s-%d-branch-%d.jsonl", sp.Scenario, sp.Strategy, sp.Seed, v.branch.step)
	}
	if err := v.s.save(path); err != nil {
		v.status = "could not save: " + untrusted.Line(err.Error())
		return
	}
	v.status = fmt.Sprintf("saved %d events to %s", v.s.log.Len(), path)
	if v.s.run == nil || !v.s.run.Simulated() || !v.recorded() {
		return
	}
	// A finished simulated run's schedule goes beside it: with the steps
	// chosen by hand, run --schedule plays the same log again.
	spath := strings.TrimSuffix(path, ".jsonl") + ".schedule"
	if err := v.s.saveSchedule(spath); err != nil {
		v.status += "; could not save the schedule: " + untrusted.Line(err.Error())
		return
	}
	v.status += " and its schedule to " + spath
}
