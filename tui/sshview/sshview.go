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

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	bm "github.com/charmbracelet/wish/bubbletea"
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
}

// Open reports whether cfg admits anyone who reaches the address.
func (c Config) Open() bool { return c.Password == "" && c.AuthorizedKeys == "" }

// Server is a running SSH server of one stage.
type Server struct {
	srv *ssh.Server
	ln  net.Listener
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
	opts := []ssh.Option{
		wish.WithHostKeyPath(cfg.HostKey),
		wish.WithMiddleware(
			bm.Middleware(handler(stage, cfg.Theme)),
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
	if err := os.Chmod(cfg.HostKey, 0o600); err != nil {
		return nil, fmt.Errorf("cannot keep the SSH host key private: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for SSH on %s: %w", cfg.Addr, err)
	}
	s := &Server{srv: srv, ln: ln}
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// handler gives every session a read-only view of its own.
func handler(stage *tui.Stage, th *themes.Theme) bm.Handler {
	return func(sess ssh.Session) (tea.Model, []tea.ProgramOption) {
		pty, _, _ := sess.Pty()
		return tui.NewHostView(stage, nil, th, pty.Window.Width, pty.Window.Height), []tea.ProgramOption{tea.WithAltScreen()}
	}
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close ends every session and stops listening.
func (s *Server) Close() error { return s.srv.Close() }
