package spawn

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is the replication link between a spawned primary and its replica:
// the replica replicates from the link's address, and the link passes the
// primary's stream on lag later (what the replica sends goes at once). It
// is a slow network between two machines: a write reaches the replica lag
// after the primary answered it, and when the primary's machine dies what
// the link still holds dies with it — the writes the replica missed.
type link struct {
	ln     net.Listener
	to     string // the primary's address
	lag    atomic.Int64
	mu     sync.Mutex
	conns  []net.Conn
	held   atomic.Int64 // stream bytes in flight now
	closed bool
	cut    chan struct{} // closed by Cut
}

func newLink(to string, lag time.Duration) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, to: to, cut: make(chan struct{})}
	l.lag.Store(int64(lag))
	go l.accept()
	return l, nil
}

// Addr is where the replica replicates from.
func (l *link) Addr() *net.TCPAddr { return l.ln.Addr().(*net.TCPAddr) }

// SetLag changes how far the replica trails from now on.
func (l *link) SetLag(d time.Duration) { l.lag.Store(int64(d)) }

func (l *link) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", l.to, time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !l.track(c, up) {
			return
		}
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go l.delay(up, c)
	}
}

// track keeps c and up to cut them later; false once the link is cut.
func (l *link) track(c, up net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		up.Close()
		return false
	}
	l.conns = append(l.conns, c, up)
	return true
}

// chunk is part of the primary's stream and when it was read.
type chunk struct {
	at time.Time
	b  []byte
}

// delay passes what from says to to, each chunk lag after it was read.
func (l *link) delay(from, to net.Conn) {
	q := make(chan chunk, 4096)
	go func() {
		defer to.Close()
		broken := false
		for c := range q { // drained to the end, so the reader never blocks
			if wait := time.Until(c.at.Add(time.Duration(l.lag.Load()))); wait > 0 && !broken {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-l.cut:
				}
				t.Stop()
			}
			if broken = broken || l.isCut(); broken {
				continue
			}
			if _, err := to.Write(c.b); err != nil {
				broken = true
				continue
			}
			l.held.Add(-int64(len(c.b)))
		}
	}()
	defer close(q)
	for {
		b := make([]byte, 32<<10)
		n, err := from.Read(b)
		if n > 0 {
			l.held.Add(int64(n))
			q <- chunk{time.Now(), b[:n]}
		}
		if err != nil {
			return
		}
	}
}

func (l *link) isCut() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Cut ends the link at once; what it held is lost. It returns how many
// bytes of the primary's stream that was.
func (l *link) Cut() int64 {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0
	}
	l.closed = true
	close(l.cut)
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	lost := l.held.Load()
	l.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	return lost
}
