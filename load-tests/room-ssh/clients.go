package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// screen is what one client was sent: its bytes and frames over time, and
// when each awaited text first arrived.
type screen struct {
	name string

	mu      sync.Mutex
	bytes   int64
	frames  int // alt-screen frames: each begins with the cursor going home
	first   time.Time
	last    time.Time
	tail    []byte // the end of what came, so that a text split across reads is found
	seen    map[string]time.Time
	waits   []string
	reads   []read // each read, up to maxReads
	err     error
	stalled bool // stopped reading on purpose (a slow client)
}

var home = []byte("\x1b[H")

const maxReads = 1 << 17

type read struct {
	t         time.Time
	n, frames int
}

// window is what came between from and to: bytes, frames, and the longest
// time without a read.
func (s *screen) window(from, to time.Time) (n int64, frames int, gap time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := from
	for _, r := range s.reads {
		if r.t.Before(from) || r.t.After(to) {
			continue
		}
		n, frames = n+int64(r.n), frames+r.frames
		gap = max(gap, r.t.Sub(prev))
		prev = r.t
	}
	return n, frames, max(gap, to.Sub(prev))
}

func newScreen(name string, waits ...string) *screen {
	return &screen{name: name, seen: map[string]time.Time{}, waits: waits}
}

func (s *screen) Write(p []byte) (int, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() {
		s.first = now
	}
	s.last = now
	s.bytes += int64(len(p))
	buf := append(s.tail, p...)
	// A home sequence split across reads is counted in the read that ends it.
	f := bytes.Count(buf, home) - bytes.Count(s.tail, home)
	s.frames += f
	if len(s.reads) < maxReads {
		s.reads = append(s.reads, read{t: now, n: len(p), frames: f})
	}
	for _, w := range s.waits {
		if _, ok := s.seen[w]; !ok && bytes.Contains(buf, []byte(w)) {
			s.seen[w] = now
		}
	}
	if len(buf) > 4096 {
		buf = buf[len(buf)-4096:]
	}
	s.tail = append(s.tail[:0], buf...)
	return len(p), nil
}

// await adds a text to look for from now on; what came before is not
// searched again.
func (s *screen) await(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, text)
	s.waits = append(s.waits, text)
	s.tail = s.tail[:0]
}

// at is when text first arrived, and whether it did.
func (s *screen) at(text string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.seen[text]
	return t, ok
}

// ending is the end of what came, without its escape sequences.
func (s *screen) ending() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansiRE.ReplaceAllString(string(s.tail), "")
}

// sshClient is one participant over SSH: a real client with a terminal of
// its own, reading what the host draws; a slow one stops reading for a
// while, as a stalled terminal would.
type sshClient struct {
	*screen
	conn  *gossh.Client
	sess  *gossh.Session
	in    io.WriteCloser
	out   io.Reader
	w, h  int
	pause chan time.Duration
	gone  bool // the connection closed
}

func (c *sshClient) open() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.gone
}

func dialSSH(addr, user string, w, h int) (*sshClient, error) {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession()
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		c.Close()
		return nil, err
	}
	out, err := s.StdoutPipe()
	if err != nil {
		c.Close()
		return nil, err
	}
	in, err := s.StdinPipe()
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := s.Shell(); err != nil {
		c.Close()
		return nil, err
	}
	cl := &sshClient{screen: newScreen(user), conn: c, sess: s, in: in, out: out, w: w, h: h, pause: make(chan time.Duration, 1)}
	go cl.read()
	go func() {
		_ = c.Wait()
		cl.mu.Lock()
		cl.gone = true
		cl.mu.Unlock()
	}()
	return cl, nil
}

func (c *sshClient) read() {
	buf := make([]byte, 32<<10)
	for {
		select {
		case d := <-c.pause:
			c.mu.Lock()
			c.stalled = true
			c.mu.Unlock()
			time.Sleep(d)
		default:
		}
		n, err := c.out.Read(buf)
		if n > 0 {
			_, _ = c.Write(buf[:n])
		}
		if err != nil {
			c.mu.Lock()
			if err != io.EOF {
				c.err = err
			}
			c.mu.Unlock()
			return
		}
	}
}

func (c *sshClient) press(keys string) error {
	_, err := c.in.Write([]byte(keys))
	return err
}

func (c *sshClient) close() { c.conn.Close() }

// joinClient is a locklab join process; its lines are its screen.
type joinClient struct {
	*screen
	cmd *exec.Cmd
}

func startJoin(bin, url, room, name string, workers int) (*joinClient, error) {
	cmd := exec.Command(bin, "join", "--redis", url, "--room", room, "--name", name, "--workers", strconv.Itoa(workers))
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	j := &joinClient{screen: newScreen(name), cmd: cmd}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			_, _ = j.Write(append(sc.Bytes(), '\n'))
		}
	}()
	return j, nil
}

// proc samples a process's CPU time and memory from /proc.
type proc struct{ pid int }

// cpu is the process's user and system time so far.
func (p proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// mem is the process's resident set now and at its peak, in MiB, and its threads.
func (p proc) mem() (rss, peak float64, threads int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return 0, 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = v / 1024
		case "VmHWM:":
			peak = v / 1024
		case "Threads:":
			threads = int(v)
		}
	}
	return rss, peak, threads
}
