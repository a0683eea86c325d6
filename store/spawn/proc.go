package spawn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// proc is one redis-server or redis-sentinel process a topology spawned: in
// a directory of its own (its working directory, which is how locklab
// clean recognises it), on a loopback port, with no persistence.
type proc struct {
	Name string // "primary", "replica", "sentinel 1", "node 3"
	Role string // primary, replica, sentinel
	bin  string
	dir  string
	args func(port int) []string // the process's arguments on port
	conf func(port int) string   // if set, its configuration file on port

	mu     sync.Mutex
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	paused bool
}

// Addr is where the process listens now.
func (p *proc) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(p.port)
}

// PID is the process's id; 0 when it is not running.
func (p *proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || p.gone() {
		return 0
	}
	return p.cmd.Process.Pid
}

// gone reports whether the process has exited; mu is held.
func (p *proc) gone() bool {
	if p.exited == nil {
		return true
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// spawner is an OS thread that lives as long as the process: a child
// started with a parent-death signal gets it when the thread that forked
// it ends, so every server is started from this one, which never ends.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func startFromSpawner(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go spawnerLoop()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd, done}
	return <-done
}

// spawnerLoop starts the processes asked for, on its own OS thread.
func spawnerLoop() {
	runtime.LockOSThread() // never unlocked: the thread stays
	for r := range spawner.reqs {
		r.done <- r.cmd.Start()
	}
}

// SpawnerLoop names the goroutine that spawns servers and lives as long as
// the process, for leak checks to leave it out.
const SpawnerLoop = "github.com/locklab/locklab/store/spawn.spawnerLoop"

// portTries is how many ports a server is tried on: another process may
// take a free port between locklab choosing it and the server binding it.
const portTries = 5

// start starts the process on a free port, retrying on another when the
// port was taken meanwhile, and waits until it answers PING.
func (p *proc) start(ctx context.Context, port int) error {
	var err error
	for try := 0; try < portTries; try++ {
		if port == 0 || try > 0 {
			if port, err = pickPort(); err != nil {
				return err
			}
		}
		if err = p.startOn(ctx, port); err == nil {
			return nil
		}
		if !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// errPortTaken says the server found its port taken.
var errPortTaken = errors.New("port taken")

// pickPort chooses a port for a server (tests take it first).
var pickPort = freePort

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("store: no free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startOn starts the process on port and waits for its PING.
func (p *proc) startOn(ctx context.Context, port int) error {
	logPath := filepath.Join(p.dir, "server.log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %s's log: %w", p.Name, err)
	}
	if p.conf != nil {
		if err := os.WriteFile(filepath.Join(p.dir, "sentinel.conf"), []byte(p.conf(port)), 0o600); err != nil {
			out.Close()
			return fmt.Errorf("store: %s's configuration: %w", p.Name, err)
		}
	}
	cmd := exec.Command(p.bin, p.args(port)...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	err = startFromSpawner(cmd)
	out.Close()
	if err != nil {
		return fmt.Errorf("store: start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.port, p.exited, p.paused = cmd, port, exited, false
	p.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), DialTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond,
		ContextTimeoutEnabled: true, MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte("already in use")) {
				return errPortTaken
			}
			said := lastLine(logPath)
			return fmt.Errorf("%s (%s) exited at start: %s", p.Name, filepath.Base(p.bin), said)
		case <-ctx.Done():
			p.kill()
			return fmt.Errorf("%s on %s did not answer in time", p.Name, p.Addr())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lastLine is the last non-empty line of a server's log, bounded.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, l)
}

// signal sends sig to the process if it runs.
func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.gone() {
		return fmt.Errorf("%s is not running", p.Name)
	}
	return p.cmd.Process.Signal(sig)
}

// pause stops the process (SIGSTOP); resume lets it run on (SIGCONT).
func (p *proc) pause() error {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	return nil
}

func (p *proc) resume() error {
	p.mu.Lock()
	was := p.paused
	p.paused = false
	p.mu.Unlock()
	if !was {
		return nil
	}
	return p.signal(syscall.SIGCONT)
}

// Paused reports whether the process is stopped by SIGSTOP.
func (p *proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused && !p.gone()
}

// Running reports whether the process has not exited.
func (p *proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.gone()
}

// kill ends the process at once (SIGKILL) and waits for it.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || exited == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// restart starts the killed process again, empty (it has no persistence),
// on its old port if it is still free, else on another.
func (p *proc) restart(ctx context.Context) error {
	p.kill()
	p.mu.Lock()
	port := p.port
	p.mu.Unlock()
	return p.start(ctx, port)
}

// clientOf is a short-lived client to process p, for setup and faults. (A
// function, not a method: a method would put *redis.Client in Topology's
// type, and so in store's; see store.Redis.)
func clientOf(p *proc) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: p.Addr(), DialTimeout: time.Second, ReadTimeout: 2 * time.Second, ContextTimeoutEnabled: true,
		MaxRetries: -1, Protocol: 2, DisableIdentity: true})
}

// redisArgs are a data server's arguments: loopback only, no persistence.
func redisArgs(extra ...string) func(int) []string {
	return func(port int) []string {
		return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", ".", "--daemonize", "no", "--logfile", "",
			"--repl-diskless-sync-delay", "0"}, extra...)
	}
}

// info reads one field of INFO section sec from c ("" when absent).
func info(ctx context.Context, c *redis.Client, sec, field string) string {
	s, err := c.Info(ctx, sec).Result()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return v
		}
	}
	return ""
}
