package storetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RequireServers reports whether tests of servers beyond Redis (Postgres,
// MariaDB, memcached) must run instead of skipping: LOCKLAB_REQUIRE_SERVERS=1,
// or LOCKLAB_REQUIRE_REDIS=1, which asks for every real server.
func RequireServers() bool { return os.Getenv("LOCKLAB_REQUIRE_SERVERS") == "1" || Require() }

// missing skips tb, or fails it when real servers are required.
func missing(tb testing.TB, what, install string) {
	tb.Helper()
	msg := fmt.Sprintf("no %s: these tests need it (%s)", what, install)
	if RequireServers() {
		tb.Fatal(msg + "; LOCKLAB_REQUIRE_SERVERS=1 makes this a failure")
	}
	tb.Skip(msg + "; skipping")
}

// findBin looks for a server binary on PATH, then in the directories given.
func findBin(name string, dirs ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		matches, _ := filepath.Glob(filepath.Join(d, name))
		for i := len(matches) - 1; i >= 0; i-- {
			if fi, err := os.Stat(matches[i]); err == nil && !fi.IsDir() {
				return matches[i]
			}
		}
	}
	return ""
}

// proc is a server process the test started.
type proc struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	dir    string
	exited chan struct{} // closed once the process has ended and been waited for
}

// serverDir makes a temp dir for a server; as root it belongs to the
// unprivileged user the server runs as (database servers refuse root).
func serverDir(tb testing.TB, prefix string, as *syscall.Credential) string {
	tb.Helper()
	root := ""
	if as != nil {
		root = reachableTemp()
	}
	dir, err := os.MkdirTemp(root, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	if as != nil {
		if err := os.Chown(dir, int(as.Uid), int(as.Gid)); err != nil {
			os.RemoveAll(dir)
			tb.Fatal(err)
		}
	}
	return dir
}

// reachableTemp is a temp dir another user can pass through: the
// system's own ($TMPDIR or /tmp) unless it is closed to others (mode 0700,
// as on some machines), then /var/tmp or /dev/shm.
func reachableTemp() string {
	for _, d := range []string{os.TempDir(), "/var/tmp", "/dev/shm"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && fi.Mode().Perm()&0o001 != 0 {
			return d
		}
	}
	return ""
}

// unprivileged is the credential to run a server under when running as
// root: the first of the users that exists.
func unprivileged(names ...string) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	u, _ := user.Lookup("nobody")
	if u == nil {
		return nil
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func command(as *syscall.Credential, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	if as != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	}
	return cmd
}

// run runs a setup command to its end.
func run(as *syscall.Credential, bin string, args ...string) error {
	cmd := command(as, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", filepath.Base(bin), err, bytes.TrimSpace(out))
	}
	return nil
}

// start starts a server process.
func startProc(as *syscall.Credential, dir, bin string, args ...string) (*proc, error) {
	cmd := command(as, bin, args...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, out: out, dir: dir, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// stop ends the process (SIGTERM, then SIGKILL) and removes its directory.
func (p *proc) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// waitFor polls ready until it succeeds or the deadline passes.
func waitFor(p *proc, d time.Duration, ready func() error) error {
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = ready(); err == nil {
			return nil
		}
		select {
		case <-p.exited: // it ended (its port was taken, say): no use waiting
			return fmt.Errorf("%v (the server exited): %s", err, bytes.TrimSpace(p.out.Bytes()))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%v: %s", err, bytes.TrimSpace(p.out.Bytes()))
}

// RequireBin skips tb (or fails it when real servers are required) when
// the named server binary is not on PATH.
func RequireBin(tb testing.TB, name string) {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("LOCKLAB_REQUIRE_REDIS") == "1" {
			tb.Fatalf("no %s on PATH (apt-get install %s); LOCKLAB_REQUIRE_REDIS=1 makes this a failure", name, name)
		}
		tb.Skipf("no %s on PATH (apt-get install %s); skipping", name, name)
	}
}
