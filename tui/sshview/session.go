package sshview

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/charmbracelet/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Window changes are answered here, before the ssh package's session sees
// them: it hands each one to a channel of one that only a running view
// drains, so a resize sent before the shell, or after the view ended,
// blocked the connection's reader for good, and the connection, its
// goroutines and its socket stayed after the client left. Here the
// latest size is kept and the view picks it up when it can, so any flood
// of resizes costs one redraw at a time.

// sessionEnv names the environment entry that tells the view which
// session's sizes are its own; it is set here, never by the client.
const sessionEnv = "LOCKLAB_SSH_SESSION"

// A session keeps the environment its client sends, and no view reads
// it: beyond these bounds it is refused rather than kept.
const maxEnv, maxEnvBytes = 64, 64 << 10

// A terminal larger than this is drawn at this size: the sizes come from
// the client, and a frame is built cell by cell.
const maxCols, maxRows = 1000, 500

// sizes is the latest window size of one session.
type sizes struct {
	mu      sync.Mutex
	win     ssh.Window
	set     bool
	changed chan struct{} // one pending signal: a burst of resizes is one
	closed  chan struct{} // the session's channel is closed
}

func (s *sizes) resize(w ssh.Window) {
	s.mu.Lock()
	s.win, s.set = clampWindow(w), true
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// latest is the last size the client sent, or def if it sent none.
func (s *sizes) latest(def ssh.Window) ssh.Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set {
		return s.win
	}
	return clampWindow(def)
}

func clampWindow(w ssh.Window) ssh.Window {
	w.Width, w.Height = min(max(w.Width, 0), maxCols), min(max(w.Height, 0), maxRows)
	return w
}

// sessions finds a session's sizes by the entry in its environment.
type sessions struct {
	mu   sync.Mutex
	next atomic.Uint64
	by   map[string]*sizes
}

func (r *sessions) add() (string, *sizes) {
	id := strconv.FormatUint(r.next.Add(1), 10)
	s := &sizes{changed: make(chan struct{}, 1), closed: make(chan struct{})}
	r.mu.Lock()
	r.by[id] = s
	r.mu.Unlock()
	return id, s
}

func (r *sessions) remove(id string) {
	r.mu.Lock()
	delete(r.by, id)
	r.mu.Unlock()
}

func (r *sessions) of(sess ssh.Session) *sizes {
	id := ""
	for _, kv := range sess.Environ() {
		if v, ok := strings.CutPrefix(kv, sessionEnv+"="); ok {
			id = v
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.by[id]
}

// sessionChannel admits a session channel within the guard's limits and
// hands it to the ssh package with its requests filtered by filter.
func (s *Server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	gc := guardedOf(ctx)
	if gc == nil { // every connection comes through the guard's listener
		_ = nc.Reject(gossh.Prohibited, "not admitted")
		return
	}
	if err := s.guard.openSession(gc); err != nil {
		_ = nc.Reject(gossh.ResourceShortage, err.Error())
		return
	}
	defer s.guard.closeSession(gc)
	ssh.DefaultSessionHandler(srv, conn, filtered{NewChannel: nc, s: s}, ctx)
}

// filtered accepts a session channel and filters its requests.
type filtered struct {
	gossh.NewChannel
	s *Server
}

func (f filtered) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := f.NewChannel.Accept()
	if err != nil {
		return nil, nil, err
	}
	out := make(chan *gossh.Request)
	go f.s.filter(reqs, out)
	return ch, out, nil
}

// filter passes a session's requests on to out, but for window changes,
// which it answers itself, and closes out when the channel closes.
func (s *Server) filter(reqs <-chan *gossh.Request, out chan<- *gossh.Request) {
	id, sz := s.sessions.add()
	defer func() {
		close(sz.closed)
		s.sessions.remove(id)
		close(out)
	}()
	named, envs, envBytes := false, 0, 0
	for req := range reqs {
		switch req.Type {
		case "window-change":
			var w struct{ Cols, Rows, WidthPx, HeightPx uint32 }
			err := gossh.Unmarshal(req.Payload, &w)
			if err == nil {
				sz.resize(ssh.Window{Width: int(w.Cols), Height: int(w.Rows), WidthPixels: int(w.WidthPx), HeightPixels: int(w.HeightPx)})
			}
			_ = req.Reply(err == nil, nil)
			continue
		case "env":
			var kv struct{ Key, Value string }
			if gossh.Unmarshal(req.Payload, &kv) != nil || kv.Key == sessionEnv ||
				envs >= maxEnv || envBytes+len(req.Payload) > maxEnvBytes {
				_ = req.Reply(false, nil)
				continue
			}
			envs, envBytes = envs+1, envBytes+len(req.Payload)
		case "shell", "exec":
			if !named {
				named = true
				out <- &gossh.Request{Type: "env", Payload: gossh.Marshal(&struct{ Key, Value string }{sessionEnv, id})}
			}
		}
		out <- req
	}
}
