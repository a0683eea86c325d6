package tui

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/levels"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
)

// manual is the scheduler mode: the person at the keyboard decides which
// worker moves at each step of a simulated run. The run's scheduler asks
// (on its own goroutine) and waits; the view shows the question on its
// frame and answers from a key.
type manual struct {
	lanes  []string
	level  *levels.Level
	answer chan int
	stop   chan struct{}
	once   sync.Once

	mu   sync.Mutex
	from uint64    // steps before this one go as the plan and the seed say (undo)
	auto bool      // space: the seed decides until two workers could move
	done bool      // won, or left to the seed to the end
	q    *question // waiting for an answer
	sel  int       // the highlighted choice
	won  *winning
}

// question is one step's choices, one per worker that could move.
type question struct {
	step    uint64
	choices []choice
}

// choice is a worker that could move, and what it would do.
type choice struct {
	lane  string
	idx   int    // its candidate's index
	doing string // "SET stock=0", or "" when it goes on from a sleep or a wait
}

// winning is how a level was won.
type winning struct {
	step  uint64 // the scheduler's step when the checker saw the goal
	moves []scenario.Step
	msg   string
}

func newManual(lanes []string, from uint64, l *levels.Level) *manual {
	return &manual{lanes: lanes, from: from, level: l, answer: make(chan int, 1), stop: make(chan struct{})}
}

// close lets a waiting scheduler go: the run is stopping.
func (m *manual) close() { m.once.Do(func() { close(m.stop) }) }

// laneOf is the worker an actor's path belongs to, or "".
func (m *manual) laneOf(path string) string {
	name, _, _ := strings.Cut(path, "/")
	if slices.Contains(m.lanes, name) {
		return name
	}
	return ""
}

// steer is the run's steerer: it asks the view and waits.
func (m *manual) steer(step uint64, cands []sim.Candidate) int {
	m.mu.Lock()
	if step < m.from || m.done {
		m.mu.Unlock()
		return -1
	}
	var cs []choice
	for i, c := range cands {
		lane := m.laneOf(c.Path)
		if lane == "" {
			if c.Ready {
				// What no worker owns (the run's own actor, a fault's
				// timer) goes first: nobody chooses it.
				m.mu.Unlock()
				return i
			}
			continue
		}
		if !slices.ContainsFunc(cs, func(o choice) bool { return o.lane == lane }) {
			cs = append(cs, choice{lane: lane, idx: i, doing: c.Doing})
		}
	}
	slices.SortStableFunc(cs, func(a, b choice) int { return slices.Index(m.lanes, a.lane) - slices.Index(m.lanes, b.lane) })
	if len(cs) == 0 || m.auto && len(cs) < 2 {
		m.mu.Unlock()
		return -1
	}
	m.auto = false
	m.q = &question{step: step, choices: cs}
	m.sel = min(m.sel, len(cs)-1)
	m.mu.Unlock()
	select {
	case i := <-m.answer:
		return i
	case <-m.stop:
		return -1
	}
}

// asking is the question waiting for an answer, if any.
func (m *manual) asking() (*question, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.q, m.sel
}

// pick answers with the choice numbered i (from 0); false when there is
// no such choice or no question.
func (m *manual) pick(i int) bool {
	m.mu.Lock()
	q := m.q
	if q == nil || i < 0 || i >= len(q.choices) {
		m.mu.Unlock()
		return false
	}
	m.q, m.sel = nil, i
	m.mu.Unlock()
	m.answer <- q.choices[i].idx
	return true
}

// move moves the highlight by d.
func (m *manual) move(d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.q != nil {
		m.sel = (m.sel + d + len(m.q.choices)) % len(m.q.choices)
	}
}

// enter answers with the highlighted choice.
func (m *manual) enter() bool {
	_, sel := m.asking()
	return m.pick(sel)
}

// seed lets the seeded scheduler go until two workers could move.
func (m *manual) seed() bool {
	m.mu.Lock()
	q := m.q
	m.q, m.auto = nil, true
	m.mu.Unlock()
	if q != nil {
		m.answer <- -1
	}
	return q != nil
}

// wait lets time pass to the end of the earliest sleep, holding every
// worker back; the same step is asked again.
func (m *manual) wait() bool {
	m.mu.Lock()
	q := m.q
	m.q = nil
	m.mu.Unlock()
	if q != nil {
		m.answer <- sim.Wait
	}
	return q != nil
}

// finish leaves every further step to the seed.
func (m *manual) finish() {
	m.mu.Lock()
	q := m.q
	m.q, m.done = nil, true
	m.mu.Unlock()
	if q != nil {
		m.answer <- -1
	}
}

// moves are the steps the person chose among the hand-chosen ones.
func (m *manual) moves(hand []scenario.Step) []scenario.Step {
	var out []scenario.Step
	for _, s := range hand {
		if m.laneOf(s.Actor) != "" || s.Actor == scenario.WaitStep {
			out = append(out, s)
		}
	}
	return out
}

// checkWin looks for the level's goal among the events from..to of the
// log; found, the level is won and the rest is left to the seed.
func (m *manual) checkWin(run *scenario.Run, from, to int) {
	if m.level == nil || run == nil {
		return
	}
	m.mu.Lock()
	won := m.won != nil
	m.mu.Unlock()
	if won {
		return
	}
	for i := from; i < to; i++ {
		e := run.Log.At(i)
		if e.Kind != event.KindViolation || e.Code != m.level.Goal {
			continue
		}
		w := &winning{step: run.Steps(), moves: m.moves(run.Hand()), msg: e.Msg}
		m.mu.Lock()
		m.won = w
		m.mu.Unlock()
		m.finish()
		return
	}
}

// result is the level's outcome so far.
func (m *manual) result() *winning {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.won
}

// movesLine says what the person did, in steps.
func movesLine(moves []scenario.Step) string {
	if len(moves) == 0 {
		return "no step chosen yet"
	}
	var names []string
	for _, s := range moves {
		lane, _, _ := strings.Cut(s.Actor, "/") // w01, not which of its actors
		names = append(names, lane)
	}
	const keep = 12
	if len(names) > keep {
		names = append([]string{"…"}, names[len(names)-keep:]...)
	}
	return fmt.Sprintf("%d step(s) chosen: %s", len(moves), strings.Join(names, " "))
}
