package tui

import (
	"fmt"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/present"
)

// talkPlay is a talk in progress: its scenes in order, each opened by a
// title card; → after a scene's last beat goes to the next scene's card.
type talkPlay struct {
	t       *talk.Talk
	logs    []*scenario.Loaded // a scene's saved run, or nil: run it live
	i       int                // the scene
	card    bool               // its title card is on screen
	end     bool               // the end card (after the last scene)
	started time.Time          // when the first scene started, for the notes' clock
	publish func(talk.Position)
	last    talk.Position
}

// startTalk sets the app up to give opts.Talk, from its first title card.
func (a *App) startTalk() {
	o := a.opts
	a.talk = &talkPlay{t: o.Talk, logs: o.TalkLogs, card: true, publish: o.Publish}
	a.opts.Present = true
	a.opts.AfterLast = a.nextScene
	a.screen = screenRun
}

// talkCtl is a talk: on a title card → starts the scene and ← goes to
// the one before, and a card takes every other key but quit, help and
// theme; in a scene, ← at its first beat goes back to its card, and esc
// does nothing (a talk has no form to go back to).
type talkCtl struct{ a *App }

// open: a card, or a scene still starting, takes every key.
func (c talkCtl) open() bool {
	tp := c.a.talk
	return tp.card || tp.end || c.a.run == nil
}

func (c talkCtl) rest(tea.KeyMsg) tea.Cmd { return nil }

func (c talkCtl) keys() []binding {
	a, tp, pk := c.a, c.a.talk, defaultPresentKeys()
	switch {
	case tp.card || tp.end:
		start, back := pk.Next, pk.Prev
		start.SetHelp("→/space/.", "start the scene")
		start.SetEnabled(!tp.end)
		back.SetHelp("←", "back")
		back.SetEnabled(tp.end || tp.i > 0)
		return []binding{
			{start, footCard, func(tea.KeyMsg) tea.Cmd { return a.startScene() }},
			{back, footCardBack, act(func() {
				if tp.end {
					tp.end, tp.card = false, true
					return
				}
				tp.i--
			})},
		}
	case a.run == nil:
		return nil // the scene is starting
	}
	card, stay := pk.Prev, bind([]string{"esc"}, "", "")
	card.SetHelp("←", "title card")
	card.SetEnabled(a.run.pr.firstBeatShown())
	return []binding{
		{card, footBeatPrev, act(func() {
			a.stopRun()
			tp.card = true
		})},
		{stay, footNone, act(func() {})},
	}
}

// nextScene is → after a scene's last beat: the next scene's title card,
// or the end of the talk.
func (a *App) nextScene() tea.Cmd {
	tp := a.talk
	a.stopRun()
	if tp.i+1 < len(tp.t.Scenes) {
		tp.i++
		tp.card = true
	} else {
		tp.end = true
	}
	return nil
}

// startScene leaves the title card and starts its scene: its saved run,
// played at the scenario's pace, or a live run.
func (a *App) startScene() tea.Cmd {
	tp := a.talk
	sc := &tp.t.Scenes[tp.i]
	tp.card = false
	if tp.started.IsZero() {
		tp.started = a.lastFrame
	}
	speed := 0.0
	if a.opts.SpeedSet {
		speed = a.opts.Speed
	}
	if tp.i < len(tp.logs) && tp.logs[tp.i] != nil {
		a.run = newRunView(replaySession(filepath.Base(sc.Log), tp.logs[tp.i]), speed)
		a.run.status = ""
		a.onSceneRun()
		a.run.pr.next() // plays to the first beat
		return nil
	}
	if speed == 0 {
		speed = openingSpeed(sc.Scenario, sc.Strategy, sc.Params)
	}
	a.run = nil
	return a.start(runSpec{Scenario: sc.Scenario, Strategy: sc.Strategy, Params: sc.Params, Seed: sc.Seed, Speed: speed, Faults: sc.Faults}, nil)
}

// onSceneRun marks the run on screen as the talk's current scene.
func (a *App) onSceneRun() {
	if a.talk == nil || a.run == nil {
		return
	}
	sc := &a.talk.t.Scenes[a.talk.i]
	a.run.scene = sc
	a.run.pr.on = true
	a.run.pr.extras = sceneExtras(sc)
	a.run.mark = nil
	if a.rec != nil {
		a.run.mark = a.rec.Marker
	}
}

// sceneExtras are a talk scene's captions and notes, as the presenter's
// extras (keyed by beat number).
func sceneExtras(sc *talk.Scene) map[string]BeatExtra {
	x := map[string]BeatExtra{}
	for _, b := range sc.Beats {
		x[b.Key()] = BeatExtra{Caption: b.Caption, Notes: b.Notes}
	}
	return x
}

// firstBeatShown reports whether the presenter stands at the first beat or
// before it: ← then goes back to the scene's title card.
func (p *presenter) firstBeatShown() bool {
	v := p.v
	bs := p.beats()
	return len(bs) == 0 || (p.waiting && p.at <= bs[0]) || int64(v.cursor) < bs[0]
}

// talkView is the title card or the end card, or "" when a scene plays.
func (a *App) talkView(th *themes.Theme, w, h int) string {
	tp := a.talk
	hint := "→ starts it · ← the scene before"
	if tp.i == 0 {
		hint = "→ starts it"
	}
	if tp.end {
		return present.EndCard(th, tp.t, w, h)
	}
	return present.Card(th, tp.t, tp.i, w, h, hint)
}

// position is where the talk stands, for the speaker's notes.
func (a *App) position() talk.Position {
	tp := a.talk
	sc := &tp.t.Scenes[tp.i]
	p := talk.Position{Talk: tp.t.Title, Scene: tp.i + 1, Scenes: len(tp.t.Scenes), Title: sc.Title,
		Card: tp.card, Started: tp.started, Ended: tp.end}
	nextScene := "the end of the talk"
	if tp.i+1 < len(tp.t.Scenes) {
		n := tp.t.Scenes[tp.i+1]
		nextScene = fmt.Sprintf("scene %d: %s (%s · %s)", tp.i+2, n.Title, n.Scenario, n.Strategy)
	}
	switch {
	case tp.end:
		p.Notes, p.Next = "", ""
	case tp.card || a.run == nil:
		p.Notes = sc.Notes
		p.Next = fmt.Sprintf("%s · %s runs", sc.Scenario, sc.Strategy)
		if b, ok := sc.Beat(1, a.firstBeatID(sc)); ok && b.Notes != "" {
			p.Next += " — beat 1: " + b.Notes
		}
	default:
		v := a.run
		st := v.pr.state()
		p.Beat, p.Beats, p.Caption, p.Notes = st.Index, st.Total, st.Caption, st.Notes
		if st.Extra != "" {
			p.Caption += "  " + st.Extra
		}
		switch {
		case st.Last:
			p.Next = nextScene
		default:
			p.Next = fmt.Sprintf("beat %d", st.Index+1)
			if seq, ok := v.pr.nextBeat(max(v.pr.at, int64(v.cursor)), v.tl.N-1); ok && !v.s.live() || ok && v.pr.rewound() {
				p.Next += ": " + v.s.log.At(int(seq)).Msg
			} else if st.NextID != "" {
				p.Next += " (" + st.NextID + ")"
			}
			if x := extraFor(v.pr.extras, st.NextID, st.Index+1); x.Notes != "" {
				p.Next += " — " + x.Notes
			}
		}
	}
	return p
}

// publishPosition sends the talk's position to the notes when it moved.
func (a *App) publishPosition() {
	if a.talk == nil || a.talk.publish == nil {
		return
	}
	if p := a.position(); p != a.talk.last {
		a.talk.last = p
		a.talk.publish(p)
	}
}

// firstBeatID is the ID of the first beat a scene's run can tell.
func (a *App) firstBeatID(sc *talk.Scene) string {
	if s, err := scenario.Lookup(sc.Scenario); err == nil {
		if ids := s.BeatIDs(sc.Strategy, sc.Params); len(ids) > 0 {
			return ids[0]
		}
	}
	return ""
}
