package tui

import (
	"fmt"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// roundFold is the one fold of the stage's round that every view of it
// reads — the host's own and each one over SSH: its lanes, its tally at
// every event and the scoreboard at a playhead. A frame folds the events
// that came since the last frame once, whoever draws first, so that what
// a frame costs does not grow with the number of viewers times the log.
//
// The fold (tl, folded, gone, catches) is Stage.foldMu's to guard: it is
// folded under the write lock, taken only when no view reads it
// (Stage.catchUp), and read under the read lock, so views update and
// draw side by side and none waits for another's draw. What is worked
// out from it for every view (scores, late, summary) is mu's.
type roundFold struct {
	run     *scenario.Run
	n       int // the stage's round it is
	tl      *timeline.Timeline
	folded  time.Time // when it last caught up with the log
	gone    []int     // per lane: the seq of its "disconnected" crash; −1 none
	catches int       // times it folded new events (for tests)

	mu sync.Mutex
	// scores are the scoreboard at playhead k.
	scoresK  int
	scores   []scenario.Score
	scored   bool
	summary  *check.Summary  // the ended round's, once asked
	in       map[string]bool // the attendees with lanes in the round
	lateFor  []Attendee      // the lobby late was worked out for
	late     string          // who in it has no lane in the round
	scorings int             // times it worked out a scoreboard (for tests)
}

// foldEvery is the most often the shared fold catches up with the log: a
// frame of the host's own screen. The views that draw between two catches
// show the same events, and share one scoreboard.
const foldEvery = frameEvery

// newRoundFold returns the fold of round n, which runs r.
func newRoundFold(r *scenario.Run, n int, requests bool) *roundFold {
	h := r.Header
	tl := timeline.New(h.Params.Workers)
	tl.Strategy = h.Strategy
	tl.SetTraits(h.LockTraits())
	tl.Arrivals = requests // a served round's requests arrive one by one
	f := &roundFold{run: r, n: n, tl: tl, gone: make([]int, len(h.Lanes))}
	for i := range f.gone {
		f.gone[i] = -1
	}
	return f
}

// catch folds the log's new events, at most once per foldEvery unless
// force (the run has ended: its last events go in before anyone says
// DONE). The caller holds foldMu for writing.
func (f *roundFold) catch(now time.Time, force bool) {
	if !force && !f.folded.IsZero() && now.Sub(f.folded) < foldEvery && now.Sub(f.folded) >= 0 {
		return
	}
	f.folded = now
	log := f.run.Log
	n := log.Len()
	if n == f.tl.N {
		return
	}
	f.catches++
	for i := f.tl.N; i < n; i++ {
		e := log.At(i)
		if disconnected(&e) && int(e.Worker) < len(f.gone) && f.gone[e.Worker] < 0 {
			f.gone[e.Worker] = i
		}
		f.tl.Fold(e)
	}
}

func disconnected(e *event.Event) bool {
	return e.Kind == event.KindCrash && strings.HasSuffix(e.Msg, " disconnected") && e.Worker >= 0
}

// scoresAt is the scoreboard at playhead k (events 0…k), from the
// tally at k: one per attendee, in lane order (shared: not to be
// changed). The caller holds foldMu for reading.
func (f *roundFold) scoresAt(k int) []scenario.Score {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scored && f.scoresK == k {
		return f.scores
	}
	f.scorings++
	t := f.tl.TallyAt(k)
	f.scores = scenario.ScoresOf(f.run.Header, &t, func(lane int) bool { return f.gone[lane] >= 0 && f.gone[lane] <= k })
	f.scoresK, f.scored = k, true
	return f.scores
}

// lateOf names the attendees of lobby (a list the stage keeps until the
// next poll) who have no lane in the round: they join the next.
func (f *roundFold) lateOf(lobby []Attendee) string {
	if len(lobby) == 0 {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lateFor) == len(lobby) && &f.lateFor[0] == &lobby[0] {
		return f.late
	}
	if f.in == nil {
		f.in = map[string]bool{}
		for _, l := range f.run.Header.Lanes {
			f.in[check.AttendeeOf(l)] = true
		}
	}
	var late []string
	for _, a := range lobby {
		if !f.in[a.Name] {
			late = append(late, a.Name)
		}
	}
	f.lateFor, f.late = lobby, strings.Join(late, ", ")
	return f.late
}

// lobbyEntries are the lobby's entries as drawn in theme th, for every
// view: made once per poll of the lobby (a new list each), not once per
// view.
func (s *Stage) lobbyEntries(th *themes.Theme, lobby []Attendee) []string {
	s.shareMu.Lock()
	defer s.shareMu.Unlock()
	c := s.entries[th]
	if len(c.lobby) == len(lobby) && len(lobby) > 0 && &c.lobby[0] == &lobby[0] {
		return c.entries
	}
	entries := make([]string, 0, len(lobby))
	for _, a := range lobby {
		entries = append(entries, th.Accent.Render(a.Name)+" "+th.Muted.Render(fmt.Sprintf("%d worker(s)", a.Workers)))
	}
	if s.entries == nil {
		s.entries = map[*themes.Theme]lobbyEntries{}
	}
	s.entries[th] = lobbyEntries{lobby: lobby, entries: entries}
	return entries
}

// lobbyEntries are a lobby's entries as drawn in one theme.
type lobbyEntries struct {
	lobby   []Attendee
	entries []string
}

// verdict is the ended round's verdict, summarised once for every view.
func (f *roundFold) verdict() string { return f.summarize().Verdict }

// summarize is the ended round's summary, worked out once for every view
// (shared: not to be changed).
func (f *roundFold) summarize() *check.Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.summary == nil {
		f.summary = f.run.Summary()
	}
	return f.summary
}

// sharedFold is the fold of round n, which runs r: the one every view of
// the stage shares, made by the first to ask.
func (s *Stage) sharedFold(r *scenario.Run, n int) *roundFold {
	s.shareMu.Lock()
	defer s.shareMu.Unlock()
	if s.fold == nil || s.fold.run != r {
		s.fold = newRoundFold(r, n, s.Requests)
	}
	return s.fold
}

// hold takes the stage's fold for reading, for a view's update or draw;
// the returned func gives it back. Views hold it side by side: only a
// catch excludes them, for as long as it folds a frame's events.
func (s *Stage) hold() func() {
	s.foldMu.RLock()
	return s.foldMu.RUnlock
}

// catchUp folds the new events of the stage's round into its one fold,
// when a frame's fold is due (or the round has ended) and no view reads
// the fold at this instant; else a later frame, the host's or a view's,
// folds them. It never waits for a view's draw: a frame that would have
// to shows the events folded so far, and the round reads as over only
// once its last events are in the fold (runView.onFrame).
func (s *Stage) catchUp(now time.Time) {
	r, n := s.Round()
	if r == nil {
		return
	}
	f := s.sharedFold(r, n)
	ended := false
	select {
	case <-r.Done():
		ended = true // before the log's length is read: all of it is in
	default:
	}
	if !s.foldMu.TryLock() {
		return
	}
	defer s.foldMu.Unlock()
	f.catch(now, ended)
}

// catchUp folds the round's new events into the stage's one fold on a
// frame, unless a view reads it at this instant (see Stage.catchUp).
func (v *HostView) catchUp(msg tea.Msg) {
	if t, ok := msg.(frameMsg); ok {
		v.stage.catchUp(time.Time(t))
	}
}

// hold takes the stage's shared fold for reading, for an update or a
// draw, and looks at it under this view's lane names; the returned func
// gives it back.
func (v *HostView) hold() func() {
	give := v.stage.hold()
	if v.run != nil && v.run.shared != nil {
		v.run.lookAtShared()
	}
	return give
}
