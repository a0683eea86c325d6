// Package storetest starts throwaway redis-server processes on free loopback
// ports for tests and benchmarks. Without redis-server on PATH the caller is
// skipped with a clear message, or failed when LOCKLAB_REQUIRE_REDIS=1.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// QuietRedis stops go-redis from logging, for test binaries: runs stopped
// mid-connect leave background dials that fail once a store is closed.
func QuietRedis() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Server is one redis-server process.
type Server struct {
	Addr string
	URL  string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	// exited is closed once the process has ended and been waited for.
	exited chan struct{}
}

// Require reports whether real-Redis tests must run instead of skipping.
func Require() bool { return os.Getenv("LOCKLAB_REQUIRE_REDIS") == "1" }

// Start starts a redis-server for tb and stops it when tb ends. extra
// arguments are passed to the server.
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "no redis-server on PATH: real-Redis tests need it (apt-get install redis-server)"
		if Require() {
			tb.Fatal(msg + "; LOCKLAB_REQUIRE_REDIS=1 makes this a failure")
		}
		tb.Skip(msg + "; skipping")
	}
	var lastErr error
	for range 5 {
		s, err := start(bin, extra)
		if err == nil {
			tb.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	tb.Fatalf("start redis-server: %v", lastErr)
	return nil
}

// StartN starts n independent servers (Redlock nodes).
func StartN(tb testing.TB, n int) []*Server {
	tb.Helper()
	ss := make([]*Server, n)
	for i := range ss {
		ss[i] = Start(tb)
	}
	return ss
}

// URLs lists the servers' URLs.
func URLs(ss []*Server) []string {
	urls := make([]string, len(ss))
	for i, s := range ss {
		urls[i] = s.URL
	}
	return urls
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(bin string, extra []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startOn(bin, port, extra)
}

func startOn(bin string, port int, extra []string) (*Server, error) {
	var err error
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
		"--loglevel", "warning"}, extra...)
	cmd := exec.Command(bin, args...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s := &Server{Addr: addr, URL: "redis://" + addr + "/0", cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err = c.Ping(ctx).Err()
		cancel()
		if err == nil || strings.HasPrefix(err.Error(), "NOAUTH") { // up, with a password
			// Whoever answers must be this process: between freePort's
			// close and the server's bind, another test may have taken the
			// port, and then this server exited while that one answers.
			// Until its process id is read, it is not known to be this
			// one: a busy machine can time INFO out, so ask again.
			pid, ok := answeringPID(addr, extra)
			switch {
			case ok && pid == cmd.Process.Pid:
				return s, nil
			case ok:
				s.Stop()
				return nil, fmt.Errorf("port %d was taken by another server (pid %d) before redis-server bound it", port, pid)
			}
			err = fmt.Errorf("the server at %s did not say its process id", addr)
		}
		select {
		case <-s.exited: // it ended (its port was taken, say): no use waiting
			return nil, fmt.Errorf("redis-server on %s exited: %v (%s)", addr, err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s.Stop()
	return nil, fmt.Errorf("redis-server on %s did not answer: %v (%s)", addr, err, out.String())
}

// answeringPID is the process id of the server answering at addr, read
// with the password given in extra if any; ok is false when it cannot be read.
func answeringPID(addr string, extra []string) (pid int, ok bool) {
	o := &redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true}
	for i, a := range extra {
		if a == "--requirepass" && i+1 < len(extra) {
			o.Password = extra[i+1]
		}
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(info, "\n") {
		if v, found := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); found {
			pid, err := strconv.Atoi(v)
			return pid, err == nil
		}
	}
	return 0, false
}

// Client returns a plain client to the server, closed when tb ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	tb.Cleanup(func() { c.Close() })
	return c
}

// Freeze stops the server's process (SIGSTOP): connections stay open and
// nothing answers, as with a server hung or paused in a debugger.
func (s *Server) Freeze(tb testing.TB) {
	tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Thaw)
}

// Thaw lets a frozen server run again (SIGCONT).
func (s *Server) Thaw() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the server.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Signal sends sig to the server process (SIGSTOP freezes it, SIGCONT
// thaws it).
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }
