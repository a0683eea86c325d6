// Package sshview serves the host's live view over SSH with wish: each
// attendee who connects gets a view of their own — their own terminal
// size, their own pause, step and seek over the round's one log — and no
// way to change the run.
package sshview

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
)

// Config says where to listen and whom to admit.
type Config struct {
	Addr string
	// Password, if set, admits whoever gives it.
	Password string
	// AuthorizedKeys, if set, is an authorized_keys file: its keys are admitted.
	AuthorizedKeys string
	// HostKey is the server's key file, generated once if missing.
	HostKey string
	Theme   *themes.Theme
	// Participate, if set, seats every user but WatchUser in the room as
	// a participant, named after their SSH user.
	Participate tui.Participate

	// The limits below are OpenSSH's where it has one; zero means the
	// default. LoginGrace is how long a connection may go without
	// showing the view: to log in and open it, or after closing it.
	LoginGrace time.Duration
	// MaxStartups is how many connections may be without a view at once;
	// more are closed as they come.
	MaxStartups int
	// MaxSessions bounds the sessions of one connection, MaxViewers the
	// sessions of all.
	MaxSessions, MaxViewers int
	// StallAfter is how long a view may be held up by a client that does
	// not read before its connection is closed; zero means DefaultStallAfter.
	StallAfter time.Duration
}

// Open reports whether cfg admits anyone who reaches the address.
func (c Config) Open() bool { return c.Password == "" && c.AuthorizedKeys == "" }

// Server is a running SSH server of one stage.
type Server struct {
	participate tui.Participate
	srv         *ssh.Server
	ln          net.Listener
	guard       *guard
	sessions    sessions
	draw        chan struct{} // tokens to update and draw a view (see gated)
	stallAfter  time.Duration
}

// DefaultHostKey is the host key's path under the user's config directory.
func DefaultHostKey() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory for the SSH host key: %w", err)
	}
	return filepath.Join(dir, "locklab", "ssh_host_ed25519"), nil
}

// Listen starts serving stage's view on cfg.Addr.
func Listen(cfg Config, stage *tui.Stage) (*Server, error) {
	if cfg.HostKey == "" {
		return nil, errors.New("sshview: no host key path")
	}
	if err := os.MkdirAll(filepath.Dir(cfg.HostKey), 0o700); err != nil {
		return nil, fmt.Errorf("cannot keep the SSH host key: %w", err)
	}
	s := &Server{guard: newGuard(cfg), sessions: sessions{by: map[string]*sizes{}}, participate: cfg.Participate,
		draw: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)), stallAfter: cfg.StallAfter}
	if s.stallAfter <= 0 {
		s.stallAfter = DefaultStallAfter
	}
	opts := []ssh.Option{
		wish.WithHostKeyPath(cfg.HostKey),
		wish.WithMiddleware(
			s.viewMiddleware(stage, cfg.Theme),
			activeterm.Middleware(), // a view needs a terminal: `ssh -T` gets a line saying so
		),
	}
	if cfg.Password != "" {
		want := []byte(cfg.Password)
		opts = append(opts, wish.WithPasswordAuth(func(_ ssh.Context, pw string) bool {
			return subtle.ConstantTimeCompare([]byte(pw), want) == 1
		}))
	}
	if cfg.AuthorizedKeys != "" {
		opts = append(opts, wish.WithAuthorizedKeys(cfg.AuthorizedKeys))
	}
	srv, err := wish.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot start the SSH server: %w", err)
	}
	srv.ConnCallback = func(ctx ssh.Context, c net.Conn) net.Conn {
		ctx.SetValue(connKey{}, c)
		return c
	}
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.sessionChannel}
	if err := os.Chmod(cfg.HostKey, 0o600); err != nil {
		return nil, fmt.Errorf("cannot keep the SSH host key private: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for SSH on %s: %w", cfg.Addr, err)
	}
	s.srv, s.ln = srv, ln
	go func() { _ = srv.Serve(guardedListener{Listener: ln, g: s.guard}) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close ends every session and stops listening.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.guard.closeAll() // the connections still logging in, which srv does not know
	return err
}
