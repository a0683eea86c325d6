package talk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/untrusted"
)

// Position is where the talk stands, as the presenting terminal publishes
// it to the speaker's notes.
type Position struct {
	Talk    string    `json:"talk"`
	Scene   int       `json:"scene"` // 1-based
	Scenes  int       `json:"scenes"`
	Title   string    `json:"title"` // the scene's
	Card    bool      `json:"card"`  // its title card is on screen
	Beat    int       `json:"beat"`  // 0 before the first
	Beats   int       `json:"beats"` // known so far (or in all)
	Caption string    `json:"caption"`
	Notes   string    `json:"notes"`
	Next    string    `json:"next"` // what comes after this beat
	Started time.Time `json:"started"`
	Ended   bool      `json:"ended"`
}

// maxLine bounds one published position on the wire.
const maxLine = 1 << 20

// SocketPath is where the talk from the file at talkPath publishes its
// position: in $XDG_RUNTIME_DIR, else in a directory of the user's own
// under the temp dir, else (when someone else took that name first) in
// the user's cache directory. A directory is made (0700) when it is
// missing and passed over when someone else owns it or others may write
// to it; when none will do, the error says what is wrong with each.
func SocketPath(talkPath string) (string, error) {
	abs, err := filepath.Abs(talkPath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	name := "locklab-talk-" + hex.EncodeToString(sum[:6]) + ".sock"
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" && ownDir(dir) == nil {
		return filepath.Join(dir, name), nil
	}
	dirs := []string{filepath.Join(os.TempDir(), fmt.Sprintf("locklab-%d", os.Getuid()))}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "locklab"))
	}
	var why []string
	for _, dir := range dirs {
		err := os.Mkdir(dir, 0o700)
		if err == nil || errors.Is(err, os.ErrExist) {
			err = ownDir(dir)
		}
		if err == nil {
			return filepath.Join(dir, name), nil
		}
		why = append(why, err.Error())
	}
	return "", fmt.Errorf("no private directory for the notes' socket: %s; set XDG_RUNTIME_DIR to a directory of your own (0700)", strings.Join(why, "; "))
}

// ownDir checks that dir is a real directory of this user that nobody else
// may write to.
func ownDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !ok:
		return fmt.Errorf("%s: its owner cannot be told", dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user (uid %d)", dir, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by others (mode %v); make it 0700", dir, fi.Mode().Perm())
	}
	return nil
}

// Publisher serves the talk's position on a Unix socket to every notes
// client that attaches, now and later.
type Publisher struct {
	ln   net.Listener
	path string

	mu      sync.Mutex
	last    []byte
	clients map[net.Conn]chan []byte
	closed  bool
	wg      sync.WaitGroup
}

// ErrTalkRunning says another terminal already gives the talk.
var ErrTalkRunning = errors.New("this talk is already on in another terminal")

// Publish listens on path (0600). A socket left by a talk that died is
// replaced; one a running talk answers on is refused with ErrTalkRunning.
func Publish(path string) (*Publisher, error) {
	ln, err := listen(path)
	if err != nil {
		return nil, err
	}
	p := &Publisher{ln: ln, path: path, clients: map[net.Conn]chan []byte{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func listen(path string) (net.Listener, error) {
	for try := 0; ; try++ {
		ln, err := net.Listen("unix", path) // in a 0700 directory: nobody else gets in before the chmod
		if err == nil {
			ln.(*net.UnixListener).SetUnlinkOnClose(true)
			if err := os.Chmod(path, 0o600); err != nil {
				ln.Close()
				return nil, err
			}
			return ln, nil
		}
		if try > 0 || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot open the notes socket: %w", err)
		}
		if c, derr := net.DialTimeout("unix", path, time.Second); derr == nil {
			c.Close()
			return nil, fmt.Errorf("%w (%s)", ErrTalkRunning, path)
		}
		if fi, serr := os.Lstat(path); serr != nil || fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("cannot open the notes socket: %s exists and is not a socket", path)
		}
		os.Remove(path) // stale: its talk is gone
	}
}

// Path is the socket's path.
func (p *Publisher) Path() string { return p.path }

func (p *Publisher) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		ch := make(chan []byte, 16)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.clients[c] = ch
		if p.last != nil {
			ch <- p.last
		}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c, ch)
	}
}

// serve writes positions to one client until it leaves or the talk ends.
func (p *Publisher) serve(c net.Conn, ch chan []byte) {
	defer p.wg.Done()
	defer c.Close()
	for b := range ch {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(b); err != nil {
			p.drop(c)
			for range ch { // until drop's close
			}
			return
		}
	}
}

func (p *Publisher) drop(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.clients[c]; ok {
		delete(p.clients, c)
		close(ch)
	}
}

// Send publishes pos to every client; a client too slow to take it misses
// it and gets the next one. It never blocks the caller.
func (p *Publisher) Send(pos Position) {
	b, err := json.Marshal(pos)
	if err != nil {
		return
	}
	b = append(b, '\n')
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = b
	for _, ch := range p.clients {
		select {
		case ch <- b:
		default:
		}
	}
}

// Close ends the talk for every client and removes the socket.
func (p *Publisher) Close() error {
	p.mu.Lock()
	p.closed = true
	for c, ch := range p.clients {
		delete(p.clients, c)
		close(ch)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// Follow attaches to the talk at path and calls fn with each position it
// publishes; attached reports each time the connection comes and goes.
// When no talk is on yet, or it ends, Follow waits and attaches again, so
// either terminal may start first. It returns when ctx ends.
func Follow(ctx context.Context, path string, attached func(bool), fn func(Position)) {
	for ctx.Err() == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", path)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
			continue
		}
		attached(true)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 0, 4096), maxLine)
		for sc.Scan() {
			var pos Position
			if json.Unmarshal(sc.Bytes(), &pos) == nil {
				// Whoever holds the socket speaks: its text is cleaned too.
				pos.Talk, pos.Title, pos.Next = untrusted.Line(pos.Talk), untrusted.Line(pos.Title), untrusted.Line(pos.Next)
				pos.Caption, pos.Notes = untrusted.Text(pos.Caption), untrusted.Text(pos.Notes)
				fn(pos)
			}
		}
		stop()
		c.Close()
		attached(false)
	}
}
