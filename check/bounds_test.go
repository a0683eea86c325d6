package check_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// endless repeats its bytes forever: /dev/zero, or a log that never ends.
type endless struct {
	unit []byte
	i    int
}

func (r *endless) Read(p []byte) (int, error) {
	for n := range p {
		p[n] = r.unit[r.i]
		r.i = (r.i + 1) % len(r.unit)
	}
	return len(p), nil
}

// prefixed is head, then an endless repetition of unit.
func prefixed(head, unit string) io.Reader {
	return io.MultiReader(strings.NewReader(head), &endless{unit: []byte(unit)})
}

// numbered is head, then events numbered from 1 on, without end.
type numbered struct {
	head string
	seq  int
	buf  []byte
}

func (r *numbered) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.seq == 0 {
			r.buf = []byte(r.head)
		}
		r.seq++
		r.buf = fmt.Appendf(r.buf, `{"seq":%d,"t":5,"worker":0,"kind":"attempt","res":"lock:stock"}`+"\n", r.seq)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// allocated is how many bytes f allocates, in total.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileLogs reads each hostile input through both readers and wants
// one clear line naming the line and the limit, with memory to match.
func TestHostileLogs(t *testing.T) {
	defer check.SetMaxLogEventsForTest(10000)()
	event := `{"seq":1,"t":5,"worker":0,"kind":"attempt","res":"lock:stock"}` + "\n"
	for name, tc := range map[string]struct {
		in   func() io.Reader
		want string
	}{
		"negative worker": {func() io.Reader {
			return strings.NewReader(header + "\n" + `{"seq":1,"t":5,"worker":-5,"kind":"attempt","res":"lock:stock"}` + "\n")
		}, "line 2: worker -5 is out of range: the header says 2 workers"},
		"worker past the header": {func() io.Reader {
			return strings.NewReader(header + "\n" + `{"seq":1,"t":5,"worker":2,"kind":"attempt"}` + "\n")
		}, "line 2: worker 2 is out of range"},
		"negative peer": {func() io.Reader {
			return strings.NewReader(header + "\n" + `{"seq":1,"t":5,"worker":0,"kind":"wait","peer":-7}` + "\n")
		}, "line 2: peer -7 is out of range"},
		"node past the header": {func() io.Reader {
			h := strings.Replace(header, `"workers":2`, `"workers":2,"nodes":5`, 1)
			return strings.NewReader(h + "\n" + `{"seq":1,"t":5,"worker":0,"kind":"vote","node":9}` + "\n")
		}, "line 2: node 9 is out of range: the header says 5 node(s) (0 to 4)"},
		"two billion workers": {func() io.Reader {
			return strings.NewReader(strings.Replace(header, `"workers":2`, `"workers":2000000000`, 1) + "\n" + event)
		}, "line 1: header says 2000000000 workers; a log holds 0 to 10000"},
		"a year long": {func() io.Reader {
			return strings.NewReader(header + "\n" + event + `{"seq":2,"t":31536000000000,"worker":0,"kind":"done","ok":true}` + "\n")
		}, "line 3: t 31536000000000 is outside a run: a log spans 0 to 168h0m0s"},
		"call a year in": {func() io.Reader {
			return strings.NewReader(header + "\n" + `{"seq":2,"t":5,"call":31536000000000,"worker":0,"kind":"acquired"}` + "\n")
		}, "line 2: call 31536000000000 is outside a run"},
		"t beyond int64": {func() io.Reader {
			return strings.NewReader(header + "\n" + `{"seq":2,"t":9223372036854775807,"worker":0,"kind":"done"}` + "\n")
		}, "line 2: t beyond ±292 years is outside a run"},
		"dev zero": {func() io.Reader { return &endless{unit: []byte{0}} },
			"line 1: longer than 1024 KiB; a line of an event log is at most 1024 KiB"},
		"endless line": {func() io.Reader { return prefixed(header+"\n"+`{"seq":1,"msg":"`, "ab") },
			"line 2: longer than 1024 KiB"},
		"endless events": {func() io.Reader { return &numbered{head: header + "\n"} },
			"line 10002: more than 10000 events; an event log holds at most 10000"},
		"truncated": {func() io.Reader { return strings.NewReader(header + "\n" + event + `{"seq":2,"t":9,"wor`) },
			"line 3: truncated: the file ends in the middle of an event"},
	} {
		for reader, read := range map[string]func(io.Reader) error{
			"ReadRecording": func(r io.Reader) error { _, err := check.ReadRecording(r); return err },
			"LoadLog":       func(r io.Reader) error { _, err := scenario.LoadLog(r); return err },
		} {
			var err error
			n := allocated(func() { err = read(tc.in()) })
			var le *check.LineError
			if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: got %v\nwant %s…", name, reader, err, tc.want)
			}
			if n > 64<<20 { // generous: the limits keep it to a few MiB
				t.Errorf("%s, %s: allocated %d MiB", name, reader, n>>20)
			}
		}
	}
}

// TestSummarizeIgnoresMadeUpWorkers folds events a reader would refuse,
// as a caller with its own events might pass them: no panic.
func TestSummarizeIgnoresMadeUpWorkers(t *testing.T) {
	h := event.Header{Scenario: "oversell", Strategy: "none", Params: event.Params{Workers: 2}}
	evs := check.Slice{
		{T: 5, Worker: -5, Kind: event.KindAttempt, Res: "lock:stock"},
		{T: 6, Worker: 1 << 30, Kind: event.KindDone},
	}
	if s := scenario.Summarize(h, evs); s.Attempts != 0 {
		t.Fatalf("attempts %d from made-up workers", s.Attempts)
	}
}

// A real run's log passes every bound.
func TestRealLogWithinBounds(t *testing.T) {
	var buf bytes.Buffer
	w, _ := check.NewWriter(&buf, event.Header{Params: event.Params{Workers: 3, Nodes: 5}, Lanes: []string{"w00", "w01", "w02"}})
	e := event.Event{T: 2 * time.Hour, Worker: 2, Kind: event.KindVote}.WithPeer(0)
	e.Node, e.Has = 4, e.Has|event.HasNode
	w.Write([]event.Event{e, {Seq: 1, T: 3 * time.Hour, Worker: event.System, Kind: event.KindNodeDown}})
	w.Close(&check.Summary{})
	if _, err := scenario.LoadLog(&buf); err != nil {
		t.Fatal(err)
	}
}

// fuzzing is whether this test binary runs a fuzz target (-test.fuzz).
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// checkReadInvariants reads data as an event log with both readers: no
// panic, memory in proportion to the input, and (when fuzzing, never in
// plain test runs) a time bound far above what the input needs.
func checkReadInvariants(t *testing.T, data []byte) {
	start := time.Now()
	var rec *check.Recording
	var err error
	n := allocated(func() {
		rec, err = check.ReadRecording(bytes.NewReader(data))
		if l, lerr := scenario.LoadLog(bytes.NewReader(data)); lerr == nil {
			scenario.Summarize(l.Header, l.Log)
		}
		if err == nil && rec != nil {
			scenario.Summarize(rec.Header, check.Slice(rec.Events))
			check.Check(check.Slice(rec.Events))
		}
	})
	if limit := uint64(64*len(data)) + 8<<20; n > limit {
		t.Fatalf("%d bytes of input allocated %d bytes (limit %d)", len(data), n, limit)
	}
	if d := time.Since(start); fuzzing() && d > 5*time.Second {
		t.Fatalf("%d bytes of input took %v", len(data), d)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error is not one line: %q", err)
	}
}

// benchLog is an event log of n retry events among 100 workers.
func benchLog(n int) []byte {
	var buf bytes.Buffer
	lanes := make([]string, 100)
	w, _ := check.NewWriter(&buf, event.Header{Scenario: "retry", Strategy: "safe", Params: event.Params{Workers: 100, Nodes: 1}, Lanes: lanes})
	kinds := []event.Kind{event.KindAttempt, event.KindDenied, event.KindBackoff}
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = event.Event{Seq: int64(i), T: time.Duration(i) * 10 * time.Microsecond, Worker: int32(i / 3 % 100), Kind: kinds[i%3], Res: "lock:stock"}
	}
	w.Write(evs)
	w.Close(&check.Summary{})
	return buf.Bytes()
}

// BenchmarkReplaySummary is replay --summary of a 100,000-event log: read
// into the compact log and folded there (what the command does) …
func BenchmarkReplaySummary(b *testing.B) {
	data := benchLog(100000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, _ := scenario.LoadLog(bytes.NewReader(data))
		scenario.Summarize(l.Header, l.Log)
	}
}

// BenchmarkReplaySummaryDecoded … and decoded into events first, as it was.
func BenchmarkReplaySummaryDecoded(b *testing.B) {
	data := benchLog(100000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rec, _ := check.ReadRecording(bytes.NewReader(data))
		scenario.Summarize(rec.Header, check.Slice(rec.Events))
	}
}
