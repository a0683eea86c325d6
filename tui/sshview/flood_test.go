package sshview

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"go.uber.org/goleak"
	gossh "golang.org/x/crypto/ssh"
)

// startView serves a live round's view on a free loopback port.
func startView(t *testing.T, cfg Config) *Server {
	t.Helper()
	stop := make(chan struct{})
	run := liveRound(t, stop)
	t.Cleanup(func() { close(stop); run.Wait() })
	stage := tui.NewStage("room t", "locklab join …")
	stage.SetRound(run)
	cfg.Addr = "127.0.0.1:0"
	cfg.HostKey = filepath.Join(t.TempDir(), "host_key")
	cfg.Theme = themes.Mono()
	srv, err := Listen(cfg, stage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// dial logs in as a viewer with x/crypto/ssh's client.
func dial(addr string) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "viewer",
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute})
}

// view is one session showing the view.
type view struct {
	*gossh.Session
	out *screen
	in  io.Writer
}

// openView opens a session with a rows×cols terminal showing the view;
// before, if given, runs between the terminal's request and the shell's.
func openView(c *gossh.Client, rows, cols int, before func(*gossh.Session) error) (*view, error) {
	sess, err := c.NewSession()
	if err != nil {
		return nil, err
	}
	if err := sess.RequestPty("xterm", rows, cols, gossh.TerminalModes{}); err != nil {
		return nil, err
	}
	if before != nil {
		if err := before(sess); err != nil {
			return nil, err
		}
	}
	v := &view{Session: sess, out: &screen{}}
	sess.Stdout = v.out
	if v.in, err = sess.StdinPipe(); err != nil {
		return nil, err
	}
	return v, sess.Shell()
}

// floodingViewer resizes its terminal every millisecond for d (and a
// hundred times before the view even starts), checks that the view
// follows to the last size, and disconnects without a word, as a killed
// client would.
func floodingViewer(addr string, d time.Duration, cols int) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	flood := func(sess *gossh.Session) error {
		for i := range 100 {
			if err := sess.WindowChange(20+i%30, 60+i%90); err != nil {
				return err
			}
		}
		return nil
	}
	v, err := openView(c, 36, 120, flood)
	if err != nil {
		return err
	}
	for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
		if err := v.WindowChange(20+i%30, 60+i%90); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	if err := v.WindowChange(5, cols); err != nil {
		return err
	}
	want := fmt.Sprintf("(it is %d×5)", cols)
	for end := time.Now().Add(time.Minute); !v.out.has(want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			return fmt.Errorf("the view never took the last size: no %q", want)
		}
	}
	return nil
}

// TestFloodOfResizesLeavesNothingBehind: ten viewers resize every
// millisecond, before and during their views, then vanish; the views
// follow them to the last size, and once they are gone every goroutine
// their sessions started is gone too.
func TestFloodOfResizesLeavesNothingBehind(t *testing.T) {
	// Not parallel: it counts the goroutines the viewers leave, which the
	// other tests' servers would add to.
	srv := startView(t, Config{})
	// The embedded store may take a connection at any time; its server's
	// goroutines end with the store, which TestMain checks.
	store := []goleak.Option{goleak.IgnoreAnyFunction("github.com/alicebob/miniredis/v2/server.(*Server).servePeer"),
		goleak.IgnoreAnyFunction("github.com/alicebob/miniredis/v2/server.(*Server).servePeer.func2")}
	baseline := append(store, goleak.IgnoreCurrent())
	before := runtime.NumGoroutine()
	errs := make(chan error, 10)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() { errs <- floodingViewer(srv.Addr().String(), time.Second, 50+i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Minutes are a hang, not a budget: the sessions end as soon as the
	// server reads that the connections closed.
	deadline := time.Now().Add(2 * time.Minute)
	err := goleak.Find(baseline...)
	for ; err != nil && time.Now().Before(deadline); err = goleak.Find(baseline...) {
	}
	t.Logf("goroutines: %d before the viewers, %d after they left", before, runtime.NumGoroutine())
	if err != nil {
		t.Fatal(err)
	}
	if waiting, sessions := srv.guard.counts(); waiting != 0 || sessions != 0 {
		t.Fatalf("the guard still counts %d connections waiting and %d sessions", waiting, sessions)
	}
}

// TestHugeWindowIsDrawnBounded: a client that claims a terminal of a
// billion cells each way gets a view drawn at a bounded size, and the
// server lives to draw the next size it sends.
func TestHugeWindowIsDrawnBounded(t *testing.T) {
	t.Parallel()
	srv := startView(t, Config{})
	c, err := dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := openView(c, 1<<30, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame", func() bool { return v.out.has("LIVE") })
	if err := v.WindowChange(1<<31, 1<<31); err != nil {
		t.Fatal(err)
	}
	if err := v.WindowChange(5, 60); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the view at 60×5", func() bool { return v.out.has("(it is 60×5)") })
}
