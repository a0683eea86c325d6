package tui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"golang.org/x/time/rate"
)

// ownMark marks a participant's own lanes and scoreboard line.
const ownMark = "▸"

// markOwn is lanes with me's marked: alice/2 → ▸alice/2.
func markOwn(lanes []string, me string) []string {
	if me == "" {
		return lanes
	}
	out := slices.Clone(lanes)
	for i, l := range out {
		if check.AttendeeOf(l) == me {
			out[i] = ownMark + l
		}
	}
	return out
}

// Participation is one participant's place in a room: the workers race
// under Name like a join process's; a send on Fire fires them in a round;
// Said keeps what the joiner said; Done ends when it leaves.
type Participation struct {
	Name string
	Fire chan<- struct{}
	Said *Said
	Done <-chan struct{}
	// Rename asks the room for a new name; it answers between rounds, nil
	// or why not in one line.
	Rename func(ctx context.Context, name string) error
	// Left, once Done is closed, is why the participant is no longer in
	// the room (nil: they left).
	Left func() error
}

// Participate seats a participant named name (as a client gave it) in the
// room until ctx ends.
type Participate func(ctx context.Context, name string) (*Participation, error)

// Said keeps the last lines written to it.
type Said struct {
	mu    sync.Mutex
	lines []string
	part  string
}

var _ io.Writer = (*Said)(nil)

const saidKeep = 4

func (s *Said) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.part + string(p)
	parts := strings.Split(text, "\n")
	s.part = parts[len(parts)-1]
	if len(s.part) > 4096 {
		s.part = s.part[:4096]
	}
	s.lines = append(s.lines, parts[:len(parts)-1]...)
	if len(s.lines) > saidKeep {
		s.lines = s.lines[len(s.lines)-saidKeep:]
	}
	return len(p), nil
}

// Last is the newest line said, "" before any.
func (s *Said) Last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) == 0 {
		return ""
	}
	return s.lines[len(s.lines)-1]
}

// Keys a participant may press: a flood beyond this is dropped, so no
// client can make its view (or the room) busier than a person can.
const (
	keysPerSecond = 10
	keyBurst      = 20
)

// ParticipantView is a participant's screen: the room's view, their own
// lanes marked, a key to fire their workers, and after each round their
// verdict and rank.
type ParticipantView struct {
	host   *HostView
	p      *Participation
	keys   *rate.Limiter
	fire   key.Binding
	rank   string // the last finished round's line for this participant
	ranked int    // the stage's round it is of
	rename key.Binding
	name   nameEditor
	foot   footLine
}

// footLine is a footer as drawn for one theme and width.
type footLine struct {
	th   *themes.Theme
	w    int
	line string
}

// NewParticipantView returns p's view of stage.
func NewParticipantView(stage *Stage, p *Participation, th *themes.Theme, w, h int) *ParticipantView {
	v := NewHostView(stage, nil, th, w, h)
	v.me, v.ownLines = p.Name, true
	return &ParticipantView{host: v, p: p, keys: rate.NewLimiter(keysPerSecond, keyBurst),
		fire: bind([]string{" ", "f"}, "space", "fire your workers"), rename: bind([]string{"n"}, "n", "your name")}
}

// Pace sets the time between frames.
func (v *ParticipantView) Pace(d time.Duration) { v.host.Pace(d) }

// Init starts the frame tick.
func (v *ParticipantView) Init() tea.Cmd { return v.host.Init() }

// Update handles keys (rate-limited), firing, and the room's frames.
func (v *ParticipantView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	v.host.catchUp(msg)
	defer v.host.hold()()
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if msg.String() == "ctrl+c" || msg.String() == "q" && !v.name.open {
			return v, tea.Quit
		}
		if !v.keys.Allow() {
			return v, nil
		}
		if v.name.open {
			return v, v.nameKey(msg)
		}
		v.name.said = ""
		if key.Matches(msg, v.rename) && v.p.Rename != nil && !v.name.waiting {
			v.editName()
			return v, nil
		}
		if key.Matches(msg, v.fire) {
			select {
			case v.p.Fire <- struct{}{}:
			default: // already fired: once is enough
			}
			return v, nil
		}
	case renamedMsg:
		v.renamed(msg)
		return v, nil
	case frameMsg:
		select {
		case <-v.p.Done:
			return v, tea.Quit
		default:
		}
		_, cmd := v.host.update(msg)
		v.ranking()
		return v, cmd
	}
	_, cmd := v.host.update(msg)
	return v, cmd
}

// ranking works out this participant's verdict and rank once a round has
// ended: most done in the scenario's terms first, then fewest violations,
// then fewest denials.
//
// It reads the stage's one fold of the round, once that fold has taken
// the round's last events: the scores and the verdict are worked out once
// for the whole room, not once per participant.
func (v *ParticipantView) ranking() {
	rv := v.host.run
	if rv == nil || rv.shared == nil || rv.shared.n == v.ranked || !rv.over {
		return
	}
	f := rv.shared
	n, run := f.n, f.run
	v.ranked = n
	scores := slices.Clone(f.scoresAt(f.tl.N - 1))
	slices.SortStableFunc(scores, func(a, b scenario.Score) int {
		if a.Did != b.Did {
			return b.Did - a.Did
		}
		if a.Violations != b.Violations {
			return a.Violations - b.Violations
		}
		return a.Denials - b.Denials
	})
	v.rank = fmt.Sprintf("round %d: you were not in it (you join the next)", n)
	for i, s := range scores {
		if v.was(s.Name) {
			v.rank = fmt.Sprintf("round %d: %s %d, denied %d, violations %d · rank %d of %d · %s", n,
				scenario.ScoreTerm(run.Header.Scenario), s.Did, s.Denials, s.Violations, i+1, len(scores), f.verdict())
		}
	}
}

// View is the room's view with the participant's lines at the bottom.
func (v *ParticipantView) View() string {
	defer v.host.hold()()
	h := v.host
	th := h.theme
	if h.w < minW || h.h < minH {
		return draw.Backdrop(th, draw.TooSmall(th, h.w, h.h), h.w)
	}
	own := []string{th.Accent.Render(draw.Fit(ownMark+" "+v.p.Name+" · "+v.status(), h.w)), v.footer(th, h.w)}
	if l := v.nameLine(th); l != "" {
		own[1] = draw.Fit(l, h.w)
	}
	h.reserve = len(own) - 1 // the room's footer (the host's keys) gives way too
	body := strings.Split(h.view(th), "\n")
	body = append(body[:len(body)-1], own...)
	return draw.Backdrop(th, strings.Join(body, "\n"), h.w)
}

func (v *ParticipantView) status() string {
	said := v.p.Said.Last()
	if v.rank != "" && !strings.Contains(said, "fire") {
		return v.rank
	}
	if said == "" {
		return "joining…"
	}
	return said
}

// footer is the participant's keys in w cells, drawn once per theme and
// width, not once a frame.
func (v *ParticipantView) footer(th *themes.Theme, w int) string {
	if c := &v.foot; c.th == th && c.w == w {
		return c.line
	}
	entry := func(k, d string) string { return th.Key.Render(k) + " " + th.KeyDesc.Render(d) }
	sep := th.Muted.Render(" • ")
	line := entry("space", "fire your workers") + sep + entry("n", "your name") + sep + entry("←/→", "seek") + sep + entry("t", "theme") + sep + entry("q", "leave")
	v.foot = footLine{th: th, w: w, line: draw.Fit(line, w)}
	return v.foot.line
}
