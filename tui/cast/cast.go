// Package cast writes asciicast v2 recordings (the asciinema format): a
// header line, then one JSON array per event — output ("o"), resize ("r")
// and marker ("m") — with its time in seconds since the start. Output that
// ends inside a UTF-8 sequence is held back until the sequence is complete,
// so every event's data is valid text.
package cast

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Theme is the terminal's colours for players: foreground, background and
// the 8 or 16 colour palette, as #rrggbb.
type Theme struct {
	FG      string `json:"fg"`
	BG      string `json:"bg"`
	Palette string `json:"palette"` // colon-separated
}

// Header is the first line of a recording.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Theme     *Theme            `json:"theme,omitempty"`
}

// Clock gives the time of an event since the recording started.
type Clock func() time.Duration

// WallClock is real time since now.
func WallClock() Clock {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

// Writer records a terminal session. It is an io.Writer for the output;
// Resize and Marker add the other events. Safe for concurrent use. A write
// only stamps and copies its bytes: encoding and writing happen on the
// writer's own goroutine, so the program being recorded never waits for
// the file. Close ends that goroutine.
type Writer struct {
	mu      sync.Mutex
	clock   Clock
	last    time.Duration
	partial []byte  // the start of an incomplete UTF-8 sequence
	queue   []event // stamped, not yet encoded
	closed  bool
	err     error // the first write error, reported by later calls

	wake chan struct{}
	done chan struct{}
	w    *bufio.Writer
	buf  []byte
}

type event struct {
	t    time.Duration
	code string
	data []byte
}

// NewWriter writes h (its version set to 2) and returns the writer.
func NewWriter(w io.Writer, h Header, clock Clock) (*Writer, error) {
	h.Version = 2
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	c := &Writer{w: bufio.NewWriterSize(w, 64<<10), clock: clock, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.w.Write(b)
	c.w.WriteByte('\n')
	go c.encode()
	return c, nil
}

// Write records p as output.
func (c *Writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data := append(c.partial, p...) // a copy: p is the caller's
	cut := completeUTF8(data)
	c.partial = append([]byte(nil), data[cut:]...)
	if cut > 0 {
		c.add("o", data[:cut])
	}
	if c.err != nil {
		return 0, c.err
	}
	return len(p), nil
}

// Resize records a new terminal size.
func (c *Writer) Resize(w, h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.add("r", []byte(fmt.Sprintf("%dx%d", w, h)))
}

// Marker records a marker with a label (players list them as chapters).
func (c *Writer) Marker(label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.add("m", []byte(label))
}

// Close writes what is queued and flushes the recording; held-back bytes of
// an incomplete sequence are written as they are.
func (c *Writer) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return c.err
	}
	if len(c.partial) > 0 {
		c.add("o", c.partial)
		c.partial = nil
	}
	c.closed = true
	c.mu.Unlock()
	c.signal()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.w.Flush(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err
}

// add stamps and queues an event (mu held); times never go backwards.
func (c *Writer) add(code string, data []byte) {
	if c.closed {
		return
	}
	t := max(c.clock(), c.last)
	c.last = t
	c.queue = append(c.queue, event{t, code, data})
	c.signal()
}

func (c *Writer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// encode writes the queued events until the writer is closed.
func (c *Writer) encode() {
	defer close(c.done)
	var batch []event
	for range c.wake {
		c.mu.Lock()
		batch, c.queue = c.queue, batch[:0]
		closed, failed := c.closed, c.err != nil
		c.mu.Unlock()
		for _, e := range batch {
			if failed {
				break
			}
			if err := c.line(e); err != nil {
				c.mu.Lock()
				c.err, failed = err, true
				c.mu.Unlock()
			}
		}
		clear(batch)
		if closed {
			c.mu.Lock()
			empty := len(c.queue) == 0
			c.mu.Unlock()
			if empty {
				return
			}
			c.signal()
		}
	}
}

// line writes one event line.
func (c *Writer) line(e event) error {
	b := c.buf[:0]
	b = append(b, '[')
	b = strconv.AppendFloat(b, e.t.Seconds(), 'f', 6, 64)
	b = append(b, `, "`...)
	b = append(b, e.code...)
	b = append(b, `", `...)
	b = appendJSONString(b, e.data)
	b = append(b, "]\n"...)
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

// completeUTF8 is the length of p without a trailing incomplete sequence.
func completeUTF8(p []byte) int {
	// A sequence is at most 4 bytes: look back for its start.
	for i := len(p) - 1; i >= 0 && i >= len(p)-4; i-- {
		b := p[i]
		if b < 0x80 {
			return len(p) // ASCII: complete
		}
		if utf8.RuneStart(b) {
			if utf8.FullRune(p[i:]) {
				return len(p)
			}
			return i
		}
	}
	return len(p)
}

const hexDigits = "0123456789abcdef"

// safe marks the bytes a JSON string holds as they are (bytes of UTF-8
// sequences included: the text is validated as a whole).
var safe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && c != 0x7f
	}
	return t
}()

// appendJSONString appends data as a JSON string: quotes, backslashes and
// control characters escaped, everything else as it is (invalid UTF-8
// becomes U+FFFD).
func appendJSONString(b, data []byte) []byte {
	b = append(b, '"')
	if !utf8.Valid(data) {
		return append(appendJSONRunes(b, data), '"')
	}
	i := 0
	for j, c := range data {
		if safe[c] {
			continue
		}
		b = appendEscaped(append(b, data[i:j]...), c)
		i = j + 1
	}
	return append(append(b, data[i:]...), '"')
}

// appendJSONRunes is appendJSONString's body for text that is not valid
// UTF-8, rune by rune.
func appendJSONRunes(b, data []byte) []byte {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				b = append(b, c)
			} else {
				b = appendEscaped(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, data[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendEscaped appends an ASCII byte that JSON wants escaped.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
