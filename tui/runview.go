package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/timeline"
)

// runView shows one session: live, paused, rewound, or replayed.
type runView struct {
	s          *session
	tl         *timeline.Timeline
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
	big        bigCache           // headlines in block letters
	mark       func(label string) // a recording's markers, if recording
	eventMarks bool               // a marker at every event too
	evMarked   int                // events marked so far
	marked     int                // timeline markers already reported
	noHints    bool               // a recording: no hints at keys nobody can press
	scene      *talk.Scene        // the talk's scene this run is, if any
	// hosted: a round of a room, opened by its host; a fault, a rerun, a
	// new seed or the parameters are a run of one's own, not the room's.
	hosted bool
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
	v := &runView{s: s, tl: timeline.New(s.header.Params.Workers), keys: defaultRunKeys(), mkeys: defaultManualKeys(), cursor: -1, speed: speed,
		faults: faultMenu{keys: defaultFaultKeys()}, pr: presenter{keys: defaultPresentKeys(), at: -1}}
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
	}
	v.setKeys()
	return v
}

// setKeys enables the bindings that do something in this mode, so the help
// footer is always true.
func (v *runView) setKeys() {
	live := v.s.live()
	v.keys.Rerun.SetEnabled(live && !v.hosted)
	v.keys.NewSeed.SetEnabled(live && !v.hosted)
	v.keys.Back.SetEnabled(!v.hosted)
	if v.recorded() {
		v.keys.Live.SetHelp("end", "to the end")
	}
	v.keys.Faults.SetEnabled(live && !v.recorded() && !v.hosted && v.s.man == nil)
	v.mkeys.Manual.SetEnabled(live && !v.recorded() && !v.hosted && v.s.man == nil && v.s.run.Simulated())
	v.mkeys.Undo.SetEnabled(live && v.s.man != nil)
	v.mkeys.Branch.SetEnabled(live && v.s.run.Simulated())
	v.mkeys.Switch.SetEnabled(v.branch != nil || v.fork != nil)
	if v.s.replay != "" {
		v.keys.Back.SetHelp("esc", "quit")
	}
}

func (v *runView) helpKeys() helpMap {
	if v.faults.open {
		return v.faultHelp()
	}
	if v.scheduling() {
		return v.manualHelp()
	}
	k, p := v.keys, v.pr.keys
	if v.pr.on {
		leave := p.Toggle
		leave.SetHelp("p", "leave presenter")
		return helpMap{
			short: []key.Binding{p.Next, p.Prev, p.Blank, leave, k.PrevMark, k.NextMark, k.Faults},
			full:  [][]key.Binding{{p.Next, p.Prev, p.Blank, p.Stay, leave}, {k.PrevMark, k.NextMark, k.Faster, k.Slower}, {k.Faults, k.Rerun, k.NewSeed}},
		}
	}
	return helpMap{
		// Most important first: the footer drops from the end.
		short: []key.Binding{k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekFwd, k.Faults, v.mkeys.Branch, v.mkeys.Switch, v.mkeys.Manual, k.StepFwd, k.StepBack, k.PrevMark, k.NextMark, k.Start, p.Toggle, k.Rerun, k.Back},
		full: [][]key.Binding{
			{k.Pause, k.StepFwd, k.StepBack, k.SeekBack, k.SeekFwd},
			{k.PrevMark, k.NextMark, k.Faster, k.Slower, k.Start, k.Live},
			{p.Toggle, k.Faults, k.Rerun, k.NewSeed, k.Save, k.ScrollUp, k.ScrollDown, k.Back},
		},
	}
}
