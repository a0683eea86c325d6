package cast

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode/utf8"
)

// Event is one event line of a recording.
type Event struct {
	Time float64
	Code string
	Data string
}

var size = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*$`)

// Limits of a recording read back. A recording is untrusted input; each
// limit is far beyond a real one (a full 500x200 frame in colour is about
// 2 MiB, a talk's recording lasts minutes).
const (
	MaxLineBytes = 16 << 20           // one line
	MaxBytes     = 1 << 30            // the whole file
	MaxEvents    = 1 << 22            // events
	MaxSize      = 10000              // columns or rows
	MaxDuration  = 7 * 24 * time.Hour // the last event's time
)

// maxEvents is MaxEvents; tests lower it.
var maxEvents = MaxEvents

// Read reads and checks a whole recording against the asciicast v2 format:
// a header with version 2 and a positive size, then events that are
// [time, code, data] with times that never go backwards, codes o, i, r or
// m, data that is valid UTF-8, and resizes that say COLSxROWS; and within
// the limits above, each named in the error that refuses a recording.
func Read(r io.Reader) (Header, []Event, error) {
	var h Header
	cr := &countingReader{r: r}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	if !sc.Scan() {
		return h, nil, scanError(1, sc.Err(), "no header")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
		return h, nil, fmt.Errorf("line 1: header: %w", err)
	}
	for _, k := range []string{"version", "width", "height"} {
		if _, ok := raw[k]; !ok {
			return h, nil, fmt.Errorf("line 1: header has no %q", k)
		}
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
		return h, nil, fmt.Errorf("line 1: header: %w", err)
	}
	if h.Version != 2 || h.Width <= 0 || h.Height <= 0 || h.Width > MaxSize || h.Height > MaxSize {
		return h, nil, fmt.Errorf("line 1: version %d, size %dx%d: want version 2 and a size from 1x1 to %dx%d", h.Version, h.Width, h.Height, MaxSize, MaxSize)
	}
	var evs []Event
	last := 0.0
	n := 2
	for ; sc.Scan(); n++ {
		switch {
		case cr.n > MaxBytes:
			return h, evs, fmt.Errorf("line %d: the file passes %d MiB; a recording is at most %d MiB", n, MaxBytes>>20, MaxBytes>>20)
		case len(evs) >= maxEvents:
			return h, evs, fmt.Errorf("line %d: more than %d events; a recording holds at most %d", n, maxEvents, maxEvents)
		}
		if !utf8.Valid(sc.Bytes()) {
			return h, evs, fmt.Errorf("line %d: not UTF-8", n)
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &arr); err != nil || len(arr) != 3 {
			return h, evs, fmt.Errorf("line %d: want [time, code, data]", n)
		}
		var e Event
		if json.Unmarshal(arr[0], &e.Time) != nil || json.Unmarshal(arr[1], &e.Code) != nil || json.Unmarshal(arr[2], &e.Data) != nil {
			return h, evs, fmt.Errorf("line %d: want [number, string, string]", n)
		}
		switch {
		case e.Time < last:
			return h, evs, fmt.Errorf("line %d: time %f goes back from %f", n, e.Time, last)
		case e.Time > MaxDuration.Seconds():
			return h, evs, fmt.Errorf("line %d: time %g s is past %v, the longest a recording lasts", n, e.Time, MaxDuration)
		case e.Code != "o" && e.Code != "i" && e.Code != "r" && e.Code != "m":
			return h, evs, fmt.Errorf("line %d: unknown event code %q", n, e.Code)
		case e.Code == "r" && !size.MatchString(e.Data):
			return h, evs, fmt.Errorf("line %d: resize to %q: want COLSxROWS", n, e.Data)
		}
		last = e.Time
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return h, evs, scanError(n, err, "")
	}
	return h, evs, nil
}

// scanError words a scanner's error on line n (or says what, without one).
func scanError(n int, err error, what string) error {
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("line %d: longer than %d MiB; a line of a recording is at most %d MiB", n, MaxLineBytes>>20, MaxLineBytes>>20)
	case err != nil:
		return fmt.Errorf("line %d: %w", n, err)
	}
	return fmt.Errorf("line %d: %s", n, what)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
