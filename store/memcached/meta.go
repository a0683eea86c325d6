package memcached

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Meta speaks the two commands of memcached's meta protocol (memcached
// 1.6 and later) that a lock needs, one round trip each: add a key only if
// absent and answer its CAS value, and delete a key only if its CAS value
// is still the one given. The classic protocol gomemcache speaks has no
// delete-if-CAS, so a release there takes a read and a delete, and the lock
// can expire and be taken by another between the two.
type Meta struct {
	addr    string
	timeout time.Duration
	maxIdle int

	mu     sync.Mutex
	free   []*metaConn
	closed bool
}

// MetaDelete is how a DeleteCAS ended.
type MetaDelete int

// The answers to DeleteCAS.
const (
	Deleted  MetaDelete = iota // the key held the CAS value and is gone
	NotFound                   // no such key: it expired
	CASMoved                   // the key holds another CAS value: another holder's
)

// metaLimit is the longest reply line read.
const metaLimit = 1024

// ErrMetaKey is a key memcached cannot store: empty, longer than 250
// bytes, or with a space or control character.
var ErrMetaKey = errors.New("store: memcached key is empty, longer than 250 bytes, or has a space or control character")

type metaConn struct {
	nc net.Conn
	rw *bufio.ReadWriter
}

// NewMeta is a meta-protocol client of the memcached at addr, keeping at
// most maxIdle idle connections.
func NewMeta(addr string, timeout time.Duration, maxIdle int) *Meta {
	return &Meta{addr: addr, timeout: timeout, maxIdle: maxIdle}
}

// AddCAS stores value at key only if the key is absent, expiring after
// secs seconds; stored reports whether it did, cas is the item's CAS value.
func (m *Meta) AddCAS(key string, value []byte, secs int32) (cas uint64, stored bool, err error) {
	if !metaKey(key) {
		return 0, false, ErrMetaKey
	}
	err = m.do(func(c *metaConn) error {
		fmt.Fprintf(c.rw, "ms %s %d T%d ME c\r\n", key, len(value), secs)
		c.rw.Write(value)
		c.rw.WriteString("\r\n")
		line, err := c.round()
		if err != nil {
			return err
		}
		code, flags, _ := strings.Cut(line, " ")
		switch code {
		case "HD":
			stored = true
		case "NS":
		default:
			return replyError("ms", line)
		}
		cas, err = casOf(flags)
		if stored && err != nil {
			return err
		}
		return nil
	})
	return cas, stored, err
}

// DeleteCAS deletes key only if its CAS value is still cas.
func (m *Meta) DeleteCAS(key string, cas uint64) (MetaDelete, error) {
	if !metaKey(key) {
		return 0, ErrMetaKey
	}
	var out MetaDelete
	err := m.do(func(c *metaConn) error {
		fmt.Fprintf(c.rw, "md %s C%d\r\n", key, cas)
		line, err := c.round()
		if err != nil {
			return err
		}
		switch line {
		case "HD":
			out = Deleted
		case "NF":
			out = NotFound
		case "EX":
			out = CASMoved
		default:
			return replyError("md", line)
		}
		return nil
	})
	return out, err
}

// Ping checks the server speaks the meta protocol (its no-op).
func (m *Meta) Ping() error {
	return m.do(func(c *metaConn) error {
		c.rw.WriteString("mn\r\n")
		line, err := c.round()
		if err == nil && line != "MN" {
			err = errors.New("the server does not speak memcached's meta protocol: memcached-add needs memcached 1.6 or later")
		}
		return err
	})
}

// Has reports whether key is there: a meta get of no value, one round
// trip (bench's ceiling for memcached).
func (m *Meta) Has(key string) (bool, error) {
	if !metaKey(key) {
		return false, ErrMetaKey
	}
	var found bool
	err := m.do(func(c *metaConn) error {
		fmt.Fprintf(c.rw, "mg %s\r\n", key)
		line, err := c.round()
		if err != nil {
			return err
		}
		switch line {
		case "HD":
			found = true
		case "EN":
		default:
			return replyError("mg", line)
		}
		return nil
	})
	return found, err
}

// Version is the server's version, as it says it ("1.6.18").
func (m *Meta) Version() (string, error) {
	var v string
	err := m.do(func(c *metaConn) error {
		c.rw.WriteString("version\r\n")
		line, err := c.round()
		if err != nil {
			return err
		}
		var ok bool
		if v, ok = strings.CutPrefix(line, "VERSION "); !ok {
			return replyError("version", line)
		}
		return nil
	})
	return v, err
}

// do runs f on a connection of the pool, dialled if none is idle; a
// connection f failed on is closed, never reused.
func (m *Meta) do(f func(*metaConn) error) error {
	c, err := m.get()
	if err != nil {
		return err
	}
	c.nc.SetDeadline(time.Now().Add(m.timeout))
	if err := f(c); err != nil {
		c.nc.Close()
		return err
	}
	m.put(c)
	return nil
}

func (m *Meta) get() (*metaConn, error) {
	m.mu.Lock()
	if n := len(m.free); n > 0 {
		c := m.free[n-1]
		m.free = m.free[:n-1]
		m.mu.Unlock()
		return c, nil
	}
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, errors.New("store: memcached connection closed")
	}
	nc, err := net.DialTimeout("tcp", m.addr, m.timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &metaConn{nc: nc, rw: bufio.NewReadWriter(bufio.NewReaderSize(nc, metaLimit), bufio.NewWriter(nc))}, nil
}

func (m *Meta) put(c *metaConn) {
	m.mu.Lock()
	if m.closed || len(m.free) >= m.maxIdle {
		m.mu.Unlock()
		c.nc.Close()
		return
	}
	m.free = append(m.free, c)
	m.mu.Unlock()
}

// Close closes the idle connections; the busy ones close when put back.
func (m *Meta) Close() {
	m.mu.Lock()
	free := m.free
	m.free, m.closed = nil, true
	m.mu.Unlock()
	for _, c := range free {
		c.nc.Close()
	}
}

// round flushes the command and reads one reply line, at most metaLimit
// bytes, without its CRLF.
func (c *metaConn) round() (string, error) {
	if err := c.rw.Flush(); err != nil {
		return "", err
	}
	b, err := c.rw.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("memcached answered a line longer than %d bytes", metaLimit)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// casOf reads the c flag of a reply's flags ("c123").
func casOf(flags string) (uint64, error) {
	for _, f := range strings.Fields(flags) {
		if v, ok := strings.CutPrefix(f, "c"); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, errors.New("memcached stored the key but answered no CAS value")
}

// replyError is an answer a command does not expect, cleaned for a line.
func replyError(cmd, line string) error {
	if len(line) > 120 {
		line = line[:120] + "…"
	}
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, line)
	return fmt.Errorf("memcached answered %s with %q", cmd, clean)
}

// metaKey reports whether memcached can take key as is.
func metaKey(key string) bool {
	if key == "" || len(key) > 250 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] == 0x7f {
			return false
		}
	}
	return true
}
