package event

import "encoding/json"

// DecodeEventForTest exposes the fast decoder to tests.
func DecodeEventForTest(b []byte, e *Event) (bool, bool, error) { return decodeEvent(b, e) }

// SlowDecodeForTest decodes an event line with encoding/json.
func SlowDecodeForTest(b []byte) (Event, bool) {
	var w struct {
		Wire
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(b, &w); err != nil || w.Summary != nil {
		return Event{}, false
	}
	return w.Event(), true
}
