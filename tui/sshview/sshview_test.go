package sshview

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	gossh "golang.org/x/crypto/ssh"
)

// screen collects what a session prints.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.buf.String(), text)
}

// waitFor waits until cond holds; minutes are a hang, not a budget.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveRound starts a hosted round on the embedded store whose remote
// workers keep sending events until stop is closed.
func liveRound(t *testing.T, stop <-chan struct{}) *scenario.Run {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sc, _ := scenario.Lookup("oversell")
	var run *scenario.Run
	ready := make(chan struct{})
	await := func(ctx context.Context) error {
		<-ready
		for i := 0; ; i++ {
			select {
			case <-stop:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
			run.Log.EmitAt(event.Event{Kind: event.KindAttempt, Worker: int32(i % 3), Res: "lock:stock",
				T: time.Duration(i) * time.Millisecond})
		}
	}
	run, err = scenario.StartHosted(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: sc.Defaults, Seed: 1},
		[]string{"alice/1", "alice/2", "bob/1"}, await)
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	return run
}

// TestViewerOverSSH: an SSH client gets a frame with the round's lanes,
// pauses its own view while the run goes on, and none of its keys change
// the run.
func TestViewerOverSSH(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	run := liveRound(t, stop)
	defer func() { close(stop); run.Wait() }()
	stage := tui.NewStage("room t", "locklab join …")
	stage.SetRound(run)
	dir := t.TempDir()
	key := filepath.Join(dir, "locklab", "ssh_host_ed25519")
	srv, err := Listen(Config{Addr: "127.0.0.1:0", HostKey: key, Theme: themes.Mono()}, stage)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key %v, %v: want a 0600 file", fi, err)
	}

	client, err := gossh.Dial("tcp", srv.Addr().String(), &gossh.ClientConfig{User: "alice",
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.RequestPty("xterm", 36, 120, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out := &screen{}
	sess.Stdout = out
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame with the lanes", func() bool { return out.has("alice/1") && out.has("bob/1") && out.has("LIVE") })

	if _, err := in.Write([]byte(" ")); err != nil { // pause this view
		t.Fatal(err)
	}
	waitFor(t, "the view paused", func() bool { return out.has("PAUSED") })
	n := run.Log.Len()
	waitFor(t, "the run going on under a paused view", func() bool { return run.Log.Len() > n+10 })

	// Every key that changes a run on the host's own screen: none does
	// here. (Keys sent together may arrive as one; apart, each is its own.)
	for _, k := range []string{"\r", "n", "f", "r", "s", "x"} {
		if _, err := in.Write([]byte(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ended := make(chan struct{})
	go func() { _ = sess.Wait(); close(ended) }()
	for quit := false; !quit; { // q ends this viewer's session, not the run
		_, _ = in.Write([]byte("q"))
		select {
		case <-ended:
			quit = true
		case <-time.After(500 * time.Millisecond):
		}
	}
	if r, round := stage.Round(); r != run || round != 1 {
		t.Fatalf("a viewer changed the stage: round %d", round)
	}
	select {
	case <-run.Done():
		t.Fatal("a viewer's keys ended the run")
	default:
	}
	n = run.Log.Len()
	waitFor(t, "the run going on after the viewer left", func() bool { return run.Log.Len() > n })
}
