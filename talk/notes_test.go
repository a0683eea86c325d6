package talk

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sockPath is a short socket path: a Unix socket's path is limited to about
// a hundred bytes, and test temp dirs can be long.
func sockPath(t *testing.T) string {
	dir, err := os.MkdirTemp("", "ll")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "t.sock")
}

func TestPublishFollow(t *testing.T) {
	path := sockPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Position, 64)
	done := make(chan struct{})
	go func() { // the notes terminal starts first
		defer close(done)
		Follow(ctx, path, func(bool) {}, func(p Position) { got <- p })
	}()
	p, err := Publish(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	if _, err := Publish(path); !errors.Is(err, ErrTalkRunning) {
		t.Errorf("a second talk on the same socket: %v", err)
	}
	// Publish until the follower has attached and seen the first, then
	// each of the rest in order.
	first := Position{Scene: 1, Beat: 1, Notes: "one"}
	for attached := false; !attached; {
		p.Send(first)
		select {
		case g := <-got:
			attached = g.Notes == "one"
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, n := range []string{"two", "three"} {
		p.Send(Position{Scene: 1, Notes: n})
		for g := range got {
			if g.Notes == n {
				break
			}
			if g.Notes != "one" {
				t.Fatalf("got %q before %q", g.Notes, n)
			}
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived its talk: %v", err)
	}
	cancel()
	<-done
}

func TestStaleSocket(t *testing.T) {
	path := sockPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // a talk that died: the file stays, nobody answers
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	p, err := Publish(path)
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	p.Close()
	os.WriteFile(path, []byte("x"), 0o600)
	if _, err := Publish(path); err == nil {
		t.Error("a file that is not a socket was replaced")
	}
}

func TestSocketPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	a, err := SocketPath("talks/a.yaml")
	if err != nil || filepath.Dir(a) != dir {
		t.Fatalf("%s %v", a, err)
	}
	b, _ := SocketPath("talks/b.yaml")
	if a == b {
		t.Error("two talks share a socket")
	}
	os.Chmod(dir, 0o777)
	t.Setenv("TMPDIR", t.TempDir())
	c, err := SocketPath("talks/a.yaml")
	if err != nil || filepath.Dir(c) == dir {
		t.Errorf("a world-writable runtime dir was used: %s %v", c, err)
	}
}
