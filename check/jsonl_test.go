package check_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

const header = `{"format":"locklab-events","version":1,"scenario":"oversell","strategy":"none","params":{"workers":2,"stock":1},"seed":1,"lanes":["w00","w01"]}`

func TestReadRecordingReportsBadLines(t *testing.T) {
	good := `{"seq":0,"t":5,"worker":-1,"kind":"init","res":"stock","stock":1}`
	for name, tc := range map[string]struct {
		in   string
		line int
		msg  string
	}{
		"bad json":       {header + "\n" + good + "\n{oops}\n", 3, "not a valid event"},
		"truncated":      {header + "\n" + good + "\n" + `{"seq":1,"t":9,"wor`, 3, "truncated"},
		"missing fields": {header + "\n" + `{"kind":"read"}` + "\n", 2, `needs "t"`},
	} {
		rec, err := check.ReadRecording(strings.NewReader(tc.in))
		var le *check.LineError
		if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(le.Msg, tc.msg) {
			t.Errorf("%s: got %v, want line %d: %s", name, err, tc.line, tc.msg)
			continue
		}
		if tc.line == 3 && (rec == nil || len(rec.Events) != 1) {
			t.Errorf("%s: the events before the bad line were not kept", name)
		}
	}
	for _, in := range []string{"", "hello\n", `{"format":"other"}` + "\n"} {
		if _, err := check.ReadRecording(strings.NewReader(in)); !errors.Is(err, check.ErrNotEventLog) {
			t.Errorf("%q: got %v, want ErrNotEventLog", in, err)
		}
	}
	newer := strings.Replace(header, `"version":1`, `"version":99`, 1)
	if _, err := check.ReadRecording(strings.NewReader(newer + "\n")); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("newer version: %v", err)
	}
}

func TestReadRecordingSkipsUnknown(t *testing.T) {
	in := header + "\n" +
		`{"seq":0,"t":1,"worker":0,"kind":"teleport","extra":[1,2]}` + "\n" +
		`{"seq":1,"t":2,"worker":0,"kind":"read","res":"stock","stock":1,"future_field":{"a":1}}` + "\n" +
		`{"summary":{}}` + "\n"
	rec, err := check.ReadRecording(strings.NewReader(in))
	if err != nil || len(rec.Events) != 1 || rec.Events[0].Stock != 1 {
		t.Fatalf("rec %+v, err %v", rec, err)
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	e := event.Event{Seq: 7, T: 1234567 * time.Microsecond, Worker: 3, Kind: event.KindBackoff,
		Res: "lock:stock", Token: "ab\"c", Msg: "ünïcode ✓", Code: "x"}
	e = e.WithStock(-2).WithOK(false).WithFence(9).WithPeer(0)
	e.TTL, e.Delay, e.Node, e.Attempt = 2500*time.Microsecond, 37*time.Millisecond+1*time.Microsecond, 4, 2
	e.Has |= event.HasTTL | event.HasDelay | event.HasNode | event.HasAttempt
	var buf bytes.Buffer
	w, _ := check.NewWriter(&buf, event.Header{})
	w.Write([]event.Event{e})
	w.Close(&check.Summary{})
	rec, err := check.ReadRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Events[0]; got != e {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, e)
	}
}

func FuzzReadRecording(f *testing.F) {
	f.Add([]byte(header + "\n" + `{"seq":0,"t":1,"worker":0,"kind":"read","stock":1}` + "\n"))
	f.Add([]byte(header + "\n{\n"))
	f.Add([]byte(`{"format":"locklab-events","version":1}` + "\n" + `{"summary":{"verdict":"x"}}`))
	f.Add([]byte(header + "\n" + `{"seq":1,"t":5,"worker":-5,"kind":"attempt","res":"lock:stock"}` + "\n"))
	f.Add([]byte(header + "\n" + `{"seq":1,"t":31536000000000,"worker":0,"kind":"done"}` + "\n"))
	f.Fuzz(checkReadInvariants)
}

// A string read again and again (the decoder hands back the one it read
// first) is cleaned every time, whichever field it is in: no event keeps
// a control sequence because an earlier one had the same text.
func TestRepeatedStringsAreCleanedEachTime(t *testing.T) {
	// Raw UTF-8, not escaped: the fast decoder reads it, and keeps one copy.
	esc := "lock:\u009b31mstock\u009b0m"

	var in strings.Builder
	in.WriteString(header + "\n")
	for i := range 40 {
		field := []string{"res", "token", "code", "msg"}[i%4]
		in.WriteString(`{"seq":` + strconv.Itoa(i) + `,"t":` + strconv.Itoa(i+1) + `,"worker":0,"kind":"attempt","` + field + `":"` + esc + `"}` + "\n")
	}
	rec, _ := check.ReadRecording(strings.NewReader(in.String()))
	if rec == nil || len(rec.Events) != 40 {
		t.Fatalf("read %v", rec)
	}
	for i, e := range rec.Events {
		if s := e.Res + e.Token + e.Code + e.Msg; !strings.HasPrefix(s, "lock:") || strings.ContainsRune(s, '\u009b') {
			t.Fatalf("event %d keeps a control sequence: %q", i, s)
		}
	}
}
