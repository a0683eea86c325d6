package scenario_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

const eachHead = `{"format":"locklab-events","version":2,"scenario":"oversell","strategy":"safe","params":{"workers":2}}` + "\n"

// What a reader keeps per resource, and a checker per operation, stays
// small: a resource's name and a token are at most MaxNameBytes, and a
// log names at most MaxResources resources. Each is refused with its
// line.
func TestNamesAndResourcesAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", check.MaxNameBytes+1)
	var many strings.Builder
	many.WriteString(eachHead)
	for i := range check.MaxResources + 1 {
		fmt.Fprintf(&many, `{"seq":%d,"t":1,"worker":0,"kind":"work_start","res":"r%d"}`+"\n", i, i)
	}
	for _, tc := range []struct {
		name, log, want string
		line            int
	}{
		{"long res", eachHead + `{"seq":0,"t":1,"worker":0,"kind":"attempt","res":"` + long + `"}` + "\n", "a resource's name is at most 256", 2},
		{"long token", eachHead + `{"seq":0,"t":1,"worker":0,"kind":"acquired","res":"lock:stock","token":"` + long + `"}` + "\n", "a token is at most 256", 2},
		{"many resources", many.String(), "an event log names at most 65536", check.MaxResources + 2},
	} {
		n := 0
		err := scenario.ReadEach(strings.NewReader(tc.log), nil, func(event.Event) { n++ })
		var le *check.LineError
		if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(le.Msg, tc.want) {
			t.Errorf("%s: got %v after %d event(s), want line %d: …%s…", tc.name, err, n, tc.line, tc.want)
		}
	}
}

// ReadEach hands over the header, then every event in order, and says
// what ReadRecording says of the log.
func TestReadEachIsReadRecordingInPieces(t *testing.T) {
	t.Parallel()
	log := eachHead + `{"seq":0,"t":1,"worker":0,"kind":"attempt","res":"lock:stock"}` + "\n" +
		`{"seq":1,"t":2,"worker":0,"kind":"acquired","res":"lock:stock","token":"a"}` + "\n"
	rec, want := check.ReadRecording(strings.NewReader(log))
	var h event.Header
	var got []event.Event
	err := scenario.ReadEach(strings.NewReader(log), func(hh event.Header) { h = hh }, func(e event.Event) { got = append(got, e) })
	if fmt.Sprint(err) != fmt.Sprint(want) || h.Scenario != rec.Header.Scenario || len(got) != len(rec.Events) {
		t.Fatalf("ReadEach: %v, header %q, %d events; ReadRecording: %v, %q, %d", err, h.Scenario, len(got), want, rec.Header.Scenario, len(rec.Events))
	}
	for i := range got {
		if got[i] != rec.Events[i] {
			t.Errorf("event %d: %+v, ReadRecording's %+v", i, got[i], rec.Events[i])
		}
	}
}
