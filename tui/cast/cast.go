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
// Resize and Marker add the other events. Safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       *bufio.Writer
	clock   Clock
	last    time.Duration
	partial []byte // the start of an incomplete UTF-8 sequence
	buf     []byte
	err     error
}

// NewWriter writes h (its version set to 2) and returns the writer.
func NewWriter(w io.Writer, h Header, clock Clock) (*Writer, error) {
	h.Version = 2
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	c := &Writer{w: bufio.NewWriterSize(w, 64<<10), clock: clock}
	c.w.Write(b)
	c.w.WriteByte('\n')
	return c, nil
}

// Write records p as output.
func (c *Writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data := append(c.partial, p...)
	cut := completeUTF8(data)
	c.partial = append([]byte(nil), data[cut:]...)
	if cut > 0 {
		c.event("o", data[:cut])
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
	c.event("r", []byte(fmt.Sprintf("%dx%d", w, h)))
}

// Marker records a marker with a label (players list them as chapters).
func (c *Writer) Marker(label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.event("m", []byte(label))
}

// Close flushes the recording; held-back bytes of an incomplete sequence
// are written as they are.
func (c *Writer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) > 0 {
		c.event("o", c.partial)
		c.partial = nil
	}
	if err := c.w.Flush(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err
}

// event writes one event line; times never go backwards.
func (c *Writer) event(code string, data []byte) {
	if c.err != nil {
		return
	}
	t := max(c.clock(), c.last)
	c.last = t
	b := c.buf[:0]
	b = append(b, '[')
	b = strconv.AppendFloat(b, t.Seconds(), 'f', 6, 64)
	b = append(b, `, "`...)
	b = append(b, code...)
	b = append(b, `", `...)
	b = appendJSONString(b, data)
	b = append(b, "]\n"...)
	c.buf = b
	if _, err := c.w.Write(b); err != nil {
		c.err = err
	}
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

// appendJSONString appends data as a JSON string: quotes, backslashes and
// control characters escaped, everything else as it is (invalid UTF-8
// becomes U+FFFD).
func appendJSONString(b, data []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
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
	return append(b, '"')
}
