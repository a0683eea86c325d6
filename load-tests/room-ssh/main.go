// Command room-ssh loads one `locklab host` with a room of real clients:
// SSH participants (golang.org/x/crypto/ssh, each with a terminal of its
// own, reading every frame) and `locklab join` processes, on a
// redis-server it starts. The host runs in a terminal of its own (a pty)
// and is steered through it as a person would: open a round, let it race,
// change the lock, open the next, quit. It prints the host's CPU and
// memory, each participant's frames and bytes per second, how long the
// host's keys took to reach each participant, and who dropped or stalled.
//
//	go run ./load-tests/room-ssh                       # 100 SSH + 30 join
//	go run ./load-tests/room-ssh -ssh 10 -join 3       # a small room
//	go run ./load-tests/room-ssh -slow 5               # 5 of the SSH clients stop reading for 20 s
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

func (o options) keepDir(tmp string) string {
	if o.keep != "" {
		return o.keep
	}
	return tmp
}

type options struct {
	ssh, join, workers, slow int
	bin, lock, keep          string
	slowFor                  time.Duration
	dump                     bool
}

func main() {
	var o options
	flag.IntVar(&o.ssh, "ssh", 100, "SSH participants")
	flag.IntVar(&o.join, "join", 30, "locklab join processes")
	flag.IntVar(&o.workers, "workers", 3, "workers of each join process")
	flag.IntVar(&o.slow, "slow", 0, "SSH participants that stop reading when the first round opens")
	flag.DurationVar(&o.slowFor, "slow-for", 20*time.Second, "how long a slow participant does not read")
	flag.StringVar(&o.bin, "locklab", "", "the locklab binary (default: built from this checkout)")
	flag.StringVar(&o.lock, "lock", "none", "the first round's lock; the host steers the second to the next one in its menu")
	flag.StringVar(&o.keep, "keep", "", "keep the results files (and the host's stderr, host.err) in this directory")
	flag.BoolVar(&o.dump, "dump", false, "when nobody sees a round open, end the host with SIGQUIT: its goroutines go to host.err")
	flag.Parse()
	go func() { // Ctrl-C ends what the run started, then the run
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		for _, f := range cleanups.take() {
			f()
		}
		os.Exit(1)
	}()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "room-ssh: "+err.Error())
		os.Exit(1)
	}
}

// cleanups are what a Ctrl-C has to end, newest first.
var cleanups stack

type stack struct {
	mu sync.Mutex
	fs []func()
}

func (s *stack) push(f func()) {
	s.mu.Lock()
	s.fs = append([]func(){f}, s.fs...)
	s.mu.Unlock()
}

func (s *stack) take() []func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.fs
	s.fs = nil
	return fs
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// room is everything the run started.
type room struct {
	mu      sync.Mutex // r.joins and r.ssh, for kill
	o       options
	dir     string
	host    *exec.Cmd
	tty     *os.File
	screen  *screen
	proc    proc
	ssh     []*sshClient
	joins   []*joinClient
	phases  []phase
	mem     sync.Mutex
	rss     float64 // the host's largest resident set sampled, MiB
	peak    float64 // its own peak (VmHWM), MiB
	threads int     // its threads at the largest sample
}

// sample keeps the host's peak memory until it exits.
func (r *room) sample() {
	for {
		rss, hwm, th := r.proc.mem()
		if rss == 0 {
			return // it has exited
		}
		r.mem.Lock()
		if rss > r.rss {
			r.rss, r.threads = rss, th
		}
		r.peak = max(r.peak, hwm)
		r.mem.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
}

// phase is a stretch of the run and what the host spent in it.
type phase struct {
	name     string
	from, to time.Time
	cpu      time.Duration
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "room-ssh-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cleanups.push(func() { os.RemoveAll(dir) })
	if o.bin == "" {
		o.bin = filepath.Join(dir, "locklab")
		if out, err := exec.Command("go", "build", "-o", o.bin, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("go build (run from the repository's root): %v\n%s", err, out)
		}
	}
	redisPort, err := freePort()
	if err != nil {
		return err
	}
	redis := exec.Command("redis-server", "--port", fmt.Sprint(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--maxclients", "10000")
	if err := redis.Start(); err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	defer func() { _ = redis.Process.Kill(); _ = redis.Wait() }()
	cleanups.push(func() { _ = redis.Process.Kill() })
	url := fmt.Sprintf("redis://127.0.0.1:%d", redisPort)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", redisPort)); err == nil {
			c.Close()
			break
		} else if i > 100 {
			return fmt.Errorf("redis-server does not answer: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := &room{o: o, dir: dir}
	defer r.stop()
	cleanups.push(r.kill)
	if err := r.startHost(url); err != nil {
		return err
	}
	return r.round(url)
}

func (r *room) startHost(url string) error {
	sshPort, err := freePort()
	if err != nil {
		return err
	}
	r.host = exec.Command(r.o.bin, "host", "--redis", url, "--room", "load", "--lock", r.o.lock, "--stock", "100", "--seed", "1",
		"--ssh", fmt.Sprintf("127.0.0.1:%d", sshPort), "--ssh-host-key", filepath.Join(r.dir, "hostkey"),
		"--join-addr", "127.0.0.1:0", "--countdown", "2s", "--results", filepath.Join(r.dir, "results"))
	r.host.Env = append(os.Environ(), "TERM=xterm-256color")
	if r.host.Stderr, err = os.Create(filepath.Join(r.o.keepDir(r.dir), "host.err")); err != nil {
		return err
	}
	r.tty, err = pty.StartWithSize(r.host, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return fmt.Errorf("starting the host: %w", err)
	}
	r.proc = proc{pid: r.host.Process.Pid}
	r.screen = newScreen("host", "join with", "results written to")
	go r.sample()
	raw, err := os.Create(filepath.Join(r.dir, "host.out"))
	if err != nil {
		return err
	}
	go func() {
		defer raw.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := r.tty.Read(buf)
			_, _ = r.screen.Write(buf[:n])
			_, _ = raw.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	if !waitFor(30*time.Second, func() bool { _, ok := r.screen.at("join with"); return ok }) {
		return fmt.Errorf("the host never showed its lobby")
	}
	return r.seat(url, fmt.Sprintf("127.0.0.1:%d", sshPort))
}

// seat starts the join processes and connects the SSH participants to the
// host at addr, and waits until its lobby shows them all.
func (r *room) seat(url, addr string) error {
	want := fmt.Sprintf("%d attendee(s)", r.o.ssh+r.o.join)
	r.screen.await(want)
	t0 := time.Now()
	for i := range r.o.join {
		j, err := startJoin(r.o.bin, url, "load", fmt.Sprintf("j%02d", i+1), r.o.workers)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.joins = append(r.joins, j)
		r.mu.Unlock()
	}
	clients := make(chan *sshClient, r.o.ssh)
	errs := make(chan error, r.o.ssh)
	gate := make(chan struct{}, 10) // ten handshakes at a time, as a room's arrivals spread
	for i := range r.o.ssh {
		go func() {
			gate <- struct{}{}
			defer func() { <-gate }()
			w, h := 80, 24
			if i%2 == 1 {
				w, h = 120, 40
			}
			c, err := dialSSH(addr, fmt.Sprintf("p%03d", i+1), w, h)
			if err != nil {
				errs <- fmt.Errorf("SSH participant %d: %w", i+1, err)
				return
			}
			clients <- c
		}()
	}
	for range r.o.ssh {
		select {
		case c := <-clients:
			r.mu.Lock()
			r.ssh = append(r.ssh, c)
			r.mu.Unlock()
		case err := <-errs:
			fmt.Println(err)
		}
	}
	if !waitFor(time.Minute, func() bool { _, ok := r.screen.at(want); return ok }) {
		fmt.Printf("the host's lobby did not show %s within a minute (a presence lapsed on a busy machine?): going on\n", want)
	}
	fmt.Printf("room: %d SSH participants (half 80×24, half 120×40) + %d join processes × %d workers, all in the host's lobby after %v\n",
		len(r.ssh), len(r.joins), r.o.workers, time.Since(t0).Round(time.Millisecond))
	return nil
}

// ansiRE matches the escape sequences a frame is drawn with.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07|\r`)

// hostTail prints the end of what the host drew, without its escapes.
func (r *room) hostTail() {
	b, _ := os.ReadFile(filepath.Join(r.dir, "host.out"))
	b = b[max(0, len(b)-6000):]
	fmt.Println("the host's screen, last bytes:\n" + ansiRE.ReplaceAllString(string(b), ""))
}

// kill ends the host and the joiners at once.
func (r *room) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.host != nil && r.host.Process != nil {
		_ = r.host.Process.Kill()
	}
	for _, j := range r.joins {
		_ = j.cmd.Process.Kill()
	}
	for _, c := range r.ssh {
		c.close()
	}
}

func (r *room) stop() {
	for _, c := range r.ssh {
		c.close()
	}
	for _, j := range r.joins {
		_ = j.cmd.Process.Kill()
		_ = j.cmd.Wait()
	}
	if r.host != nil && r.host.Process != nil && r.host.ProcessState == nil {
		_ = r.host.Process.Kill()
		_ = r.host.Wait()
	}
	if r.tty != nil {
		r.tty.Close()
	}
}

// measure runs f as a phase of the run.
func (r *room) measure(name string, f func() error) error {
	p := phase{name: name, from: time.Now()}
	c0 := r.proc.cpu()
	err := f()
	p.to, p.cpu = time.Now(), r.proc.cpu()-c0
	r.phases = append(r.phases, p)
	return err
}

func (r *room) key(keys ...string) time.Time {
	var t time.Time
	for _, k := range keys {
		time.Sleep(100 * time.Millisecond)
		t = time.Now()
		_, _ = r.tty.Write([]byte(k))
	}
	return t
}

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// screens are the SSH participants' and the join processes' screens.
func (r *room) screens() (ssh, join []*screen) {
	for _, c := range r.ssh {
		ssh = append(ssh, c.screen)
	}
	for _, j := range r.joins {
		join = append(join, j.screen)
	}
	return ssh, join
}

func awaitAll(ss []*screen, text string) {
	for _, s := range ss {
		s.await(text)
	}
}

// seenAll waits until every screen shows text or d has passed.
func seenAll(ss []*screen, text string, d time.Duration) {
	waitFor(d, func() bool {
		for _, s := range ss {
			if _, ok := s.at(text); !ok {
				return false
			}
		}
		return true
	})
}

// firing presses space on every SSH participant's screen that asks to
// fire, once, until stop closes.
func (r *room) firing(text string, stop <-chan struct{}) {
	fired := make([]bool, len(r.ssh))
	for {
		for i, c := range r.ssh {
			if _, ok := c.at(text); ok && !fired[i] {
				fired[i] = true
				_ = c.press(" ")
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func strategyAfter(lock string) string {
	all := joinable()
	for i, s := range all {
		if s == lock {
			return all[(i+1)%len(all)]
		}
	}
	return all[0]
}

func report(what string, lat latencies) {
	fmt.Printf("  %-44s %s\n", what, lat)
}

func (r *room) slowDown() {
	for i := 0; i < r.o.slow && i < len(r.ssh); i++ {
		r.ssh[len(r.ssh)-1-i].pause <- r.o.slowFor
	}
}
