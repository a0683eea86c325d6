package tui

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
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
		if !v.paused && v.pr.frame(v.tl.N-1) {
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
		if v.pr.frame(v.tl.N - 1) {
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
}

// play moves a recording's playhead by one frame's worth of virtual time.
func (v *runView) play(elapsed time.Duration) {
	if v.paused || v.follow {
		return
	}
	end := v.endT()
	v.playT = min(v.playT+time.Duration(float64(elapsed)*v.speed), end)
	target := max(v.lastAtOrBefore(v.playT), v.cursor)
	if v.pr.frame(target) {
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
