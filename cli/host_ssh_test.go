package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/check"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/locklab/locklab/workshop"
	gossh "golang.org/x/crypto/ssh"
)

// term is what an SSH session printed.
type term struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *term) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// has reports whether the session printed text, its styles aside: a
// recording under way in the same process draws every view in colour
// (lipgloss's profile is the process's), so "n your name" may come as
// "n\x1b[0m your name".
func (s *term) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(ansi.Strip(s.buf.String()), text)
}

// tail is the end of what the session printed, its escapes shown.
func (s *term) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf.Bytes()
	return fmt.Sprintf("%q", b[max(0, len(b)-800):])
}

// eventually waits until cond holds; minutes are a hang, not a budget. A
// failure shows the end of each screen given.
func eventually(t *testing.T, what string, cond func() bool, screens ...*term) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			for _, s := range screens {
				t.Logf("the screen ends with %s", s.tail())
			}
			t.Fatalf("never: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sshSession logs in as user with password and opens a w×h terminal.
func sshSession(t *testing.T, addr, user, password string, w, h int) (io.Writer, *term, error) {
	t.Helper()
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.Password(password)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute})
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out := &term{}
	s.Stdout = out
	in, err := s.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	return in, out, nil
}

// TestJoinOverSSH: with the room code as password, an SSH user takes part
// like a join process — in the lobby under their cleaned name, their
// workers fired with space, their verdict and rank after the round;
// watch@ only watches; a wrong password is refused; a 20×10 terminal gets
// a line that fits.
func TestJoinOverSSH(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock = 2
	h, err := workshop.OpenHost(ctx, workshop.HostConfig{URL: srv.URL, Room: "ssh", Scenario: "oversell", Strategy: "safe", Params: p,
		Seed: 1, Lead: 2 * time.Second}) // a joiner that sees a round after its start sits it out
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	code := workshop.NewCode()
	stage := tui.NewStage("room ssh", "")
	cfg := sshview.Config{Addr: "127.0.0.1:0", HostKey: filepath.Join(t.TempDir(), "key"), Theme: themes.Mono(), Password: code,
		Participate: participate(srv.URL, "ssh", workshop.NewWatch(ctx, srv.URL, "ssh", sshParticipantPoll))}
	ssrv, err := sshview.Listen(cfg, stage)
	if err != nil {
		t.Fatal(err)
	}
	defer ssrv.Close()
	addr := ssrv.Addr().String()

	if _, _, err := sshSession(t, addr, "alice", "WRONG1", 120, 40); err == nil {
		t.Fatal("a wrong password was admitted")
	}
	in, out, err := sshSession(t, addr, "Alice\x1b[31m-the-very-long-name-that-goes-on-and-on", code, 120, 40)
	if err != nil {
		t.Fatal(err)
	}
	const name = "Alice31m-the-very-long-name-that" // cleaned, 32 characters
	if _, wout, err := sshSession(t, addr, sshview.WatchUser, code, 120, 40); err != nil {
		t.Fatal(err)
	} else {
		defer func() {
			if !wout.has("room ssh") {
				t.Error("watch@ saw no view")
			}
		}()
	}
	bobIn, small, err := sshSession(t, addr, "bob", code, 20, 10)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "bob's 20×10 line", func() bool { return small.has("need 80×24") })
	if small.has("make the window") {
		t.Error("a 20×10 terminal got the long message")
	}
	var lobby []string
	eventually(t, "the participants in the lobby", func() bool {
		l, _ := h.Lobby(ctx)
		lobby = lobby[:0]
		for _, a := range l {
			lobby = append(lobby, a.Name)
		}
		return len(lobby) == 2
	})
	if !slices.Contains(lobby, name) || !slices.Contains(lobby, "bob") {
		t.Fatalf("lobby %q: want %s and bob; watch@ only watches", lobby, name)
	}
	run, _, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stage.SetRound(run)
	eventually(t, "the call to fire", func() bool { return out.has("fire your 3 worker(s) now") }, out)
	for _, w := range []io.Writer{in, bobIn} {
		// A flood of keys: one fires, the rest are dropped or do nothing.
		if _, err := w.Write(bytes.Repeat([]byte(" "), 500)); err != nil {
			t.Fatal(err)
		}
	}
	// bob's screen is too small to say when to fire: he keeps pressing.
	go func() {
		for {
			select {
			case <-run.Done():
				return
			case <-time.After(100 * time.Millisecond):
				_, _ = bobIn.Write([]byte(" "))
			}
		}
	}()
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice's verdict and rank", func() bool { return out.has("rank ") && out.has(" of 2") })
	if !out.has("▸Alice31m-t") {
		t.Error("alice's own lanes are not marked")
	}
	for _, l := range run.Header.Lanes {
		if w := check.AttendeeOf(l); w != name && w != "bob" {
			t.Errorf("lane %q in the round", l)
		}
	}
	s := run.Summary()
	if s.Attempts != 6 || s.Successes > 2 {
		t.Errorf("the round over SSH: %d attempts, %d sold of 2 (%s)", s.Attempts, s.Successes, s.Verdict)
	}
}

// TestAdmitByCode: a listener wider than loopback with nothing else to
// admit takes the room code as its password; loopback, or one with a
// password or keys of its own, is left as it is.
func TestAdmitByCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  sshview.Config
		want string
	}{
		{sshview.Config{Addr: "0.0.0.0:2222"}, "K7QX2M"},
		{sshview.Config{Addr: "[::]:2222"}, "K7QX2M"},
		{sshview.Config{Addr: "192.0.2.4:2222"}, "K7QX2M"},
		{sshview.Config{Addr: "127.0.0.1:2222"}, ""},
		{sshview.Config{Addr: "localhost:2222"}, ""},
		{sshview.Config{Addr: "0.0.0.0:2222", Password: "own"}, "own"},
		{sshview.Config{Addr: "0.0.0.0:2222", AuthorizedKeys: "keys"}, ""},
	} {
		cfg := c.cfg
		admitByCode(&cfg, "K7QX2M")
		if cfg.Password != c.want {
			t.Errorf("%+v: password %q, want %q", c.cfg, cfg.Password, c.want)
		}
	}
}
