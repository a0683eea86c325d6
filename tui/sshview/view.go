package sshview

import (
	"context"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/untrusted"
)

// WatchUser is the SSH user who only watches a room that takes
// participants: ssh watch@HOST.
const WatchUser = "watch"

// remotePace is the time between a view's frames over SSH: ten a second
// is smooth on a terminal across a network, and a room of a hundred views
// costs a third of what the host's own pace would.
const remotePace = 100 * time.Millisecond

// resizeEvery spaces the resizes a view redraws for: a client may send a
// thousand a second, a terminal is dragged at a frame's pace at most.
const resizeEvery = 50 * time.Millisecond

// viewMiddleware gives every session with a terminal a read-only view of
// its own, sized by the session's latest window, and holds the session
// until that view and everything it started have ended.
func (s *Server) viewMiddleware(stage *tui.Stage, th *themes.Theme) wish.Middleware {
	return func(next ssh.Handler) ssh.Handler {
		return func(sess ssh.Session) {
			pty, _, ok := sess.Pty()
			sz := s.sessions.of(sess)
			gc := guardedOf(sess.Context())
			if !ok || sz == nil || gc == nil {
				next(sess)
				return
			}
			s.guard.view(gc, +1)
			defer s.guard.view(gc, -1)
			w := sz.latest(pty.Window)
			view := tui.NewHostView(stage, nil, th, w.Width, w.Height)
			var model paced = view
			var part *tui.Participation
			if s.participate != nil && sess.User() != WatchUser {
				var err error
				part, err = s.participate(sess.Context(), sess.User())
				if err != nil {
					wish.Fatalln(sess, untrusted.Line(err.Error()))
					return
				}
				model = tui.NewParticipantView(stage, part, th, w.Width, w.Height)
			}
			model.Pace(remotePace)
			life := &pulse{}
			life.beat.Store(time.Now().UnixNano())
			p := tea.NewProgram(gated{model, s.draw, life}, append([]tea.ProgramOption{tea.WithAltScreen(),
				tea.WithFPS(int(time.Second / remotePace))}, bm.MakeOptions(sess)...)...)
			ctx, cancel := context.WithCancel(sess.Context())
			resized := make(chan struct{})
			go func() { defer close(resized); sz.follow(ctx, p) }()
			go watch(ctx, p, life, s.stallAfter, func() {
				_ = gc.Close()
				if !pty.IsZero() {
					_ = pty.Close() // the view's write waits on the pty: it fails, and the view ends
				}
			})
			_, _ = p.Run()
			p.Kill() // restores the viewer's terminal if the view failed
			cancel()
			<-resized
			if part != nil && part.Left != nil {
				select {
				case <-part.Done:
					if err := part.Left(); err != nil { // the room let them go: say why
						wish.Println(sess, untrusted.Line("you are no longer in the room: "+err.Error()))
					}
				default:
				}
			}
			next(sess)
		}
	}
}

// paced is a view whose frames can be spaced.
type paced interface {
	tea.Model
	Pace(time.Duration)
}

// gated is a view that updates and draws only with one of the server's
// draw tokens: all views together take at most as many cores as there are
// tokens, however many connect, and the rest of the host (its own screen,
// the round's fold, the participants' workers) keeps the others. Under
// load each view's frames come less often; none waits for another's
// client to read.
type gated struct {
	tea.Model
	draw chan struct{}
	life *pulse
}

// pulse is a view's life: when it last went into or out of its Update or
// View, and whether it is in one now (waiting for a token or drawing).
type pulse struct {
	beat atomic.Int64 // Unix ns
	in   atomic.Int32
}

func (p *pulse) enter() { p.in.Add(1); p.beat.Store(time.Now().UnixNano()) }
func (p *pulse) leave() { p.beat.Store(time.Now().UnixNano()); p.in.Add(-1) }

// stalled reports whether the view has been out of its Update and View
// for longer than d: its loop is held elsewhere, writing to a client that
// does not read. A view waiting for a draw token is slow, not stalled.
func (p *pulse) stalled(d time.Duration) bool {
	return p.in.Load() == 0 && time.Since(time.Unix(0, p.beat.Load())) > d
}

func (g gated) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	g.life.enter()
	defer g.life.leave()
	g.draw <- struct{}{}
	defer func() { <-g.draw }() // given back even if the view fails: the others draw on
	m, cmd := g.Model.Update(msg)
	return gated{m, g.draw, g.life}, cmd
}

func (g gated) View() string {
	g.life.enter()
	defer g.life.leave()
	g.draw <- struct{}{}
	defer func() { <-g.draw }()
	return g.Model.View()
}

// DefaultStallAfter is how long a view may be held up before its client
// is dropped: a client that does not read what it is sent blocks its own
// view's writes, and only its own, until then.
const DefaultStallAfter = 15 * time.Second

// watch drops the client of a view that has stalled for after (see
// DefaultStallAfter), until ctx ends.
func watch(ctx context.Context, p *tea.Program, life *pulse, after time.Duration, drop func()) {
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
		}
		if life.stalled(after) {
			drop()
			p.Kill()
			return
		}
	}
}

// follow sends p the session's window sizes, at most one per resizeEvery,
// until ctx ends; it quits p when the connection or the channel closes.
func (sz *sizes) follow(ctx context.Context, p *tea.Program) {
	for {
		select {
		case <-ctx.Done():
			p.Quit()
			return
		case <-sz.closed:
			p.Quit()
			return
		case <-sz.changed:
		}
		w := sz.latest(ssh.Window{})
		p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
		select {
		case <-ctx.Done():
			p.Quit()
			return
		case <-time.After(resizeEvery):
		}
	}
}
