package tui

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/timeline"
)

// runView shows one session: live, paused, rewound, or replayed.
type runView struct {
	s          *session
	tl         *timeline.Timeline
	pkeys      playKeys
	keys       runKeys
	mkeys      manualKeys
	seen       int         // events the scheduler mode has looked at for the level's goal
	branch     *branchInfo // this run is a branch: where it left its original
	fork       *branchInfo // this run has a branch: where it leaves
	branchNote string      // where the branch left, and both verdicts
	cursor     int         // index of the last event shown; −1 before the first
	follow     bool        // the cursor follows the newest event
	paused     bool
	speed      float64
	// Replay playhead (virtual time) and the wall time of the last frame.
	playT      time.Duration
	lastFrame  time.Time
	frameStep  time.Duration // between two frames: frameEvery unless recorded at another rate
	stepping   bool          // waiting for the world to make one more event
	over       bool          // the run had ended when the last frame folded the log
	loadNoted  bool          // the status said why a replay was cut short
	scroll     int
	status     string
	cache      renderCache
	hist       draw.HistCache
	trade      tradeCache // trade-offs' table
	leader     leaderFold // leader's leaders and ledger
	faults     faultMenu
	pr         presenter
	mark       func(label string) // a recording's markers, if recording
	eventMarks bool               // a marker at every event too
	evMarked   int                // events marked so far
	marked     int                // timeline markers already reported
	noHints    bool               // a recording: no hints at keys nobody can press
	scene      *talk.Scene        // the talk's scene this run is, if any
	// own are a participant's workers: their lanes stay in view, unfolded.
	own []int32
	// shared, for a room's round, is the stage's one fold of it: tl is
	// then look, this view's look at its timeline under names, this
	// view's own lane names, taken anew at each update or draw under the
	// stage's foldMu (see HostView.hold).
	shared *roundFold
	names  []string
	look   timeline.Timeline
}

// lookAtShared points tl at the shared fold's timeline as it is now,
// under this view's lane names. The caller holds the stage's fold.
func (v *runView) lookAtShared() {
	v.shared.tl.Look(&v.look, v.names)
	v.tl = &v.look
}

func newRunView(s *session, speed float64) *runView {
	v := &runView{s: s, tl: timeline.New(s.header.Params.Workers), pkeys: defaultPlayKeys(), keys: defaultRunKeys(), mkeys: defaultManualKeys(), cursor: -1, speed: speed,
		faults: faultMenu{keys: defaultFaultKeys()}, pr: presenter{keys: defaultPresentKeys(), at: -1}}
	v.pr.v, v.faults.v = v, v
	v.tl.Strategy = s.header.Strategy
	v.tl.SetTraits(s.header.LockTraits())
	if v.speed == 0 {
		v.speed = openingSpeed(s.header.Scenario, s.header.Strategy, s.header.Params)
	}
	if sc, err := scenario.Lookup(s.header.Scenario); err == nil {
		v.pr.ids = sc.BeatIDs(s.header.Strategy, s.header.Params)
	}
	if s.replay != "" {
		v.tl.Catch(s.log)
		v.follow, v.paused = false, true // a replay waits at t=0 for space
		v.status = fmt.Sprintf("replaying %s: %d events — space plays", s.replay, s.log.Len())
		if s.loading != nil {
			v.status = fmt.Sprintf("%s: space plays as it is read; the verdict comes once all is read", s.replay)
		}
	} else {
		v.follow = true
		v.status = s.note
	}
	return v
}
