// Package present is what locklab shows on stage that needs no run view:
// headlines in block letters, a talk's title and end cards, a beat's
// caption box, and the speaker's notes in a second terminal.
package present

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
)

// notesView is the speaker's second terminal: it follows the talk given in
// the first one and shows the current beat's notes, what comes next and a
// clock. It never sends anything back.
type notesView struct {
	th       *themes.Theme
	file     string
	w, h     int
	pos      talk.Position
	seen     bool // a position has arrived
	attached bool
	now      time.Time
	clock    func() time.Time
}

type (
	notesPosMsg      talk.Position
	notesAttachedMsg bool
	notesTickMsg     time.Time
)

func notesTick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return notesTickMsg(t) })
}

func (m *notesView) Init() tea.Cmd { return notesTick() }

func (m *notesView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case notesPosMsg:
		m.pos, m.seen = talk.Position(msg), true
	case notesAttachedMsg:
		m.attached = bool(msg)
	case notesTickMsg:
		m.now = time.Time(msg)
		return m, notesTick()
	case tea.KeyMsg:
		if s := msg.String(); s == "q" || s == "ctrl+c" {
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *notesView) View() string {
	th, w := m.th, max(m.w, 40)
	now := m.now
	if now.IsZero() {
		now = m.clock()
	}
	clock := now.Format("15:04:05")
	p := m.pos
	if m.seen && !p.Started.IsZero() {
		clock += " · " + fmtElapsed(now.Sub(p.Started)) + " in"
	}
	var out []string
	head := "locklab notes"
	switch {
	case !m.attached:
		head += " · waiting for the talk (locklab talk " + m.file + ")"
	case !m.seen:
		head += " · attached"
	default:
		head += fmt.Sprintf(" · %s · scene %d of %d", p.Talk, p.Scene, p.Scenes)
		if p.Beat > 0 && !p.Card {
			head += fmt.Sprintf(" · beat %d of %d", p.Beat, p.Beats)
		}
	}
	out = append(out, draw.Fit(th.Accent.Render(head), w-len(clock)-1)+" "+th.Title.Render(clock), "")
	if m.seen {
		where := p.Title
		switch {
		case p.Ended:
			where = "the end of the talk"
		case p.Card:
			where = "title card: " + p.Title
		case p.Beat == 0:
			where = p.Title + " — playing to the first beat"
		}
		out = append(out, th.Muted.Render("NOW  ")+th.Text.Render(where))
		if p.Caption != "" && !p.Card {
			out = append(out, wrapIndent(th.Muted, p.Caption, w, "     ")...)
		}
		out = append(out, "", th.Muted.Render("NOTES"))
		notes := p.Notes
		if notes == "" {
			notes = "—"
		}
		for _, para := range strings.Split(strings.TrimRight(notes, "\n"), "\n") {
			out = append(out, wrapIndent(th.Title, para, w, "  ")...)
		}
		if p.Next != "" {
			out = append(out, "", th.Muted.Render("NEXT"))
			out = append(out, wrapIndent(th.Text, p.Next, w, "  ")...)
		}
	}
	if m.h > 0 && len(out) > m.h-1 {
		out = out[:m.h-1]
	}
	for len(out) < m.h-1 {
		out = append(out, "")
	}
	out = append(out, th.Muted.Render("q quits the notes (the talk goes on)"))
	return draw.Backdrop(th, strings.Join(out, "\n"), w)
}

func wrapIndent(st interface{ Render(...string) string }, s string, w int, indent string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wordwrap(s, max(w-len(indent)-1, 20), ""), "\n") {
		out = append(out, indent+st.Render(l))
	}
	return out
}

func fmtElapsed(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// RunNotes shows the speaker's notes of the talk publishing at sock (from
// the talk file named file) until the user quits or ctx ends.
func RunNotes(ctx context.Context, th *themes.Theme, sock, file string, in io.Reader, out io.Writer) error {
	if th == nil {
		th = Theme
	}
	m := &notesView{th: th, file: file, clock: time.Now, w: 80, h: 24}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		talk.Follow(ctx, sock, func(on bool) { p.Send(notesAttachedMsg(on)) }, func(pos talk.Position) { p.Send(notesPosMsg(pos)) })
	}()
	_, err := p.Run()
	cancel()
	<-done
	if errors.Is(err, tea.ErrProgramKilled) {
		return nil // ctx ended: a signal
	}
	return err
}
