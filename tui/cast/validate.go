package cast

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"
)

// Event is one event line of a recording.
type Event struct {
	Time float64
	Code string
	Data string
}

var size = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*$`)

// Read reads and checks a whole recording against the asciicast v2 format:
// a header with version 2 and a positive size, then events that are
// [time, code, data] with times that never go backwards, codes o, i, r or
// m, data that is valid UTF-8, and resizes that say COLSxROWS.
func Read(r io.Reader) (Header, []Event, error) {
	var h Header
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	if !sc.Scan() {
		return h, nil, fmt.Errorf("line 1: no header")
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
	if h.Version != 2 || h.Width <= 0 || h.Height <= 0 {
		return h, nil, fmt.Errorf("line 1: version %d, size %dx%d: want version 2 and a size", h.Version, h.Width, h.Height)
	}
	var evs []Event
	last := 0.0
	for n := 2; sc.Scan(); n++ {
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
		case e.Code != "o" && e.Code != "i" && e.Code != "r" && e.Code != "m":
			return h, evs, fmt.Errorf("line %d: unknown event code %q", n, e.Code)
		case e.Code == "r" && !size.MatchString(e.Data):
			return h, evs, fmt.Errorf("line %d: resize to %q: want COLSxROWS", n, e.Data)
		}
		last = e.Time
		evs = append(evs, e)
	}
	return h, evs, sc.Err()
}
