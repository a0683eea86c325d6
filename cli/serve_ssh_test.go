package cli

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/creack/pty"
	gossh "golang.org/x/crypto/ssh"
)

// TestServeWithSSHView: locklab --serve ADDR --ssh ADDR serves the run
// over HTTP, shows it here, and shows the same run to an SSH viewer: the
// requests' lanes and the sale reach the viewer's own screen.
func TestServeWithSSHView(t *testing.T) {
	t.Parallel()
	key := filepath.Join(t.TempDir(), "host_key")
	cmd := exec.Command(os.Args[0], "--serve", "127.0.0.1:0", "--ssh", "127.0.0.1:0", "--ssh-host-key", key,
		"--lock", "none", "--stock", "1", "--theme", "mono")
	cmd.Env = append(os.Environ(), "LOCKLAB_TEST_MAIN=1", "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 36, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	out := &ptyOutput{}
	go io.Copy(out, tty)
	m := out.waitFor(t, regexp.MustCompile(`round 1 · curl -X POST http://(127\.0\.0\.1:\d+)/buy.*ssh -p (\d+) 127\.0\.0\.1`))
	base, sshAddr := "http://"+m[1], net.JoinHostPort("127.0.0.1", m[2])
	for range 5 {
		res, err := http.Post(base+"/buy", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}

	client, err := gossh.Dial("tcp", sshAddr, &gossh.ClientConfig{User: "viewer",
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
	view := &ptyOutput{}
	sess.Stdout = view
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, regexp.MustCompile(`sold 1 of 1`))
	view.waitFor(t, regexp.MustCompile(`w04 done ✗: out of stock`))

	if _, err := tty.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("locklab --serve --ssh: %v\n%s", err, out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("q did not end locklab --serve --ssh\n%s", out)
	}
	out.waitFor(t, regexp.MustCompile(`(?s)round 1:.*SIMULATION RESULTS.*stopped; the round's keys were deleted`))
}
