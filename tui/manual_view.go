package tui

import (
	"fmt"
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
)

// manualKeys are the scheduler mode's keys.
type manualKeys struct {
	Pick, Up, Down, Enter, Seed, Wait key.Binding
}

func defaultManualKeys() manualKeys {
	return manualKeys{
		Pick:  bind([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1-9", "move worker"),
		Up:    bind([]string{"up", "k"}, "↑", "choose"),
		Down:  bind([]string{"down", "j"}, "↓", "choose"),
		Enter: bind([]string{"enter"}, "enter", "move it"),
		Seed:  bind([]string{" "}, "space", "seed decides"),
		Wait:  bind([]string{"w"}, "w", "let time pass"),
	}
}

// schedCtl is the scheduler mode while the run goes on: the person picks
// which worker moves at each step.
type schedCtl struct{ v *runView }

func (c schedCtl) keys() []binding {
	v := c.v
	if !v.scheduling() {
		return nil
	}
	m, k := v.s.man, v.mkeys
	return []binding{
		{k.Pick, footPick, v.pickKey},
		{k.Up, footChoose, act(func() { m.move(-1) })},
		{k.Down, footNone, act(func() { m.move(1) })},
		{k.Enter, footEnter, act(func() { m.enter() })},
		{k.Wait, footWait, act(func() {
			if m.wait() {
				v.status = "time passes to the end of the earliest sleep (if one sleeps); nobody moved"
			}
		})},
		{k.Seed, footSeed, act(func() {
			m.seed()
			v.status = "the seed decides until two workers could move"
		})},
	}
}

// scheduling reports whether the scheduler mode's keys apply now.
func (v *runView) scheduling() bool { return v.s.man != nil && !v.recorded() }

// pickKey answers the run's question with the choice a digit names, or
// says why it cannot.
func (v *runView) pickKey(msg tea.KeyMsg) tea.Cmd {
	m := v.s.man
	n, _ := strconv.Atoi(msg.String())
	if m.pick(n - 1) {
		v.status = ""
		return nil
	}
	q, _ := m.asking()
	v.status = fmt.Sprintf("no worker %d can move now", n)
	switch {
	case q != nil && len(q.choices) == 1:
		v.status = fmt.Sprintf("no choice %d: only 1 can move now", n)
	case q != nil:
		v.status = fmt.Sprintf("no choice %d: 1 to %d can move now", n, len(q.choices))
	}
	return nil
}

// schedRows is the scheduler panel's height for w: its rows and border.
func (v *runView) schedRows() int {
	if v.s.man == nil {
		return 0
	}
	if v.recorded() || v.s.man.result() != nil {
		return 4 // two lines: the lanes and the verdict need the room
	}
	return min(len(v.s.man.lanes), 6) + 3
}

// schedPanel draws the scheduler mode: the goal, each worker that could
// move with what it would do, and what the person did so far.
func (v *runView) schedPanel(th *themes.Theme, w int) string {
	m := v.s.man
	h := v.schedRows()
	title := "you are the scheduler"
	if m.level != nil {
		title = fmt.Sprintf("level %s: %s", m.level.Name, m.level.GoalText)
	}
	var rows []string
	hand := m.moves(v.hand())
	q, sel := m.asking()
	switch won := m.result(); {
	case won != nil:
		rows = append(rows, th.VerdictGood.Render("LEVEL WON")+" "+th.Alarm.Render(won.msg),
			th.Text.Render(movesLine(won.moves))+" "+th.Muted.Render(m.level.Lesson))
	case v.recorded():
		rows = append(rows, th.Text.Render("the run is over — "+movesLine(hand)))
		if m.level != nil {
			rows = append(rows, th.Warn.Render("the goal was not reached: r tries again, u undoes the last step"))
		}
	case q == nil:
		rows = append(rows, th.Muted.Render("the run goes on…"))
	default:
		rows = append(rows, th.Muted.Render(fmt.Sprintf("step %d: who moves? ", q.step))+th.Text.Render(movesLine(hand)))
		for i, c := range q.choices {
			doing := "will go on (its wait or sleep ended)"
			if c.doing != "" {
				doing = "will " + c.doing
			}
			mark, style := "  ", th.Text
			if i == sel {
				mark, style = "▸ ", th.Accent
			}
			rows = append(rows, style.Render(fmt.Sprintf("%s%d %s %s", mark, i+1, c.lane, doing)))
		}
	}
	return draw.Box(th, title, rows, w, h)
}

// hand is the run's hand-chosen steps so far.
func (v *runView) hand() []scenario.Step {
	if v.s.run == nil {
		return nil
	}
	return v.s.run.Hand()
}

// schedKey changes whenever the scheduler panel would.
func (v *runView) schedKey() string {
	m := v.s.man
	if m == nil {
		return v.branchNote
	}
	q, sel := m.asking()
	var step uint64
	if q != nil {
		step = q.step
	}
	return fmt.Sprint(step, sel, m.result() != nil, len(v.hand()), v.branchNote)
}
