package tui

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/untrusted"
	"github.com/locklab/locklab/workshop"
)

// Attendee is one machine in the host's lobby.
type Attendee struct {
	Name    string
	Workers int
}

// Workshop is what the host's view needs of the room it hosts.
type Workshop interface {
	// Lobby lists who is here now.
	Lobby(ctx context.Context) ([]Attendee, error)
	// Open ends the current round and starts the next with everyone in
	// the lobby.
	Open(ctx context.Context) (*scenario.Run, error)
}

// Stage is the host's shared state: the round on screen and the lobby.
// The host's view changes it; viewers (over SSH) only read it, each with
// a playhead of their own over the round's one log.
type Stage struct {
	// Title says what is raced: room, scenario, strategy, parameters.
	Title string
	// Hint tells attendees how to join.
	Hint string
	// Code is the room's code, shown in big type in the lobby; WaysIn the
	// lines attendees join with, one per way in and address.
	Code   string
	WaysIn []string
	// Requests: the round's workers are requests to an HTTP server (serve),
	// one lane each, not attendees' machines: no lobby, no scoreboard; the
	// hint stays on screen under the lanes.
	Requests bool

	// foldMu guards the round's one fold every view reads (see
	// roundFold): a view holds it for reading while it updates or draws,
	// a catch for writing while it folds. shareMu guards which round fold
	// is, and entries.
	foldMu  sync.RWMutex
	shareMu sync.Mutex
	fold    *roundFold
	entries map[*themes.Theme]lobbyEntries // the lobby as drawn, per theme

	mu    sync.Mutex
	next  string          // what the next round races, when the host changed it
	start time.Time       // when the newest round's workers start
	runs  []*scenario.Run // every round put on stage, in order
	run   *scenario.Run
	round int
	lobby []Attendee
	err   string
	names []workshop.Rename
}

// Renames are the participants' name changes the room has seen.
func (s *Stage) Renames() []workshop.Rename {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names
}

// SetRenames says which name changes the room has seen.
func (s *Stage) SetRenames(r []workshop.Rename) {
	s.mu.Lock()
	s.names = r
	s.mu.Unlock()
}

// NewStage returns an empty stage.
func NewStage(title, hint string) *Stage { return &Stage{Title: title, Hint: hint} }

// Round is the round on stage (nil before the first) and its number.
func (s *Stage) Round() (*scenario.Run, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run, s.round
}

// SetRound puts a new round on stage (the one on stage already: nothing).
func (s *Stage) SetRound(r *scenario.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r == s.run {
		return
	}
	s.run = r
	s.round++
	s.runs = append(s.runs, r)
}

// Runs are every round put on stage, in order.
func (s *Stage) Runs() []*scenario.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

// Lobby is who was here when last asked, and why asking failed, if it did.
func (s *Stage) Lobby() ([]Attendee, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lobby, s.err
}

func (s *Stage) setLobby(l []Attendee, err error) {
	s.mu.Lock()
	s.lobby, s.err = l, ""
	if err != nil {
		s.err = untrusted.Line(err.Error())
	}
	s.mu.Unlock()
}

// Next says what the next round races, once the host has changed it.
func (s *Stage) Next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// SetNext says what the next round races.
func (s *Stage) SetNext(line string) { s.setNext(line) }

func (s *Stage) setNext(line string) {
	s.mu.Lock()
	s.next = line
	s.mu.Unlock()
}

// SetStart says when the newest round's workers start, for the countdown.
func (s *Stage) SetStart(t time.Time) {
	s.mu.Lock()
	s.start = t
	s.mu.Unlock()
}

// Countdown is how long until the newest round's workers start; 0 once
// they have.
func (s *Stage) Countdown(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.start.Sub(now), 0)
}
