package scenario_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/scenario"
)

// A log being streamed is there to draw as soon as its header is read: its
// events arrive as they are read, and the summary (the verdict) only once
// the file is read to its end.
func TestStreamLogShowsEventsBeforeTheEnd(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	header := `{"format":"locklab-events","version":2,"scenario":"oversell","strategy":"none","store":"embedded","params":{"workers":2}}` + "\n"
	ready := make(chan *scenario.Loading)
	errs := make(chan error, 1)
	go func() {
		ld, err := scenario.StreamLog(pr)
		errs <- err
		ready <- ld
	}()
	fmt.Fprint(pw, header)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	ld := <-ready
	fmt.Fprint(pw, `{"seq":0,"t":0,"worker":-1,"kind":"init","res":"stock","stock":1}`+"\n")
	fmt.Fprint(pw, `{"seq":1,"t":1000,"worker":0,"kind":"read","res":"stock","stock":1}`+"\n")
	fmt.Fprint(pw, `{"seq":2,"t":2000,"worker":1,"kind":"read","res":"stock","stock":1}`+"\n")
	// The pipe hands a write over only once it is read: the third line
	// has been taken; a fourth write waits until the third is in the log.
	fmt.Fprint(pw, `{"seq":3,"t":3000,"worker":0,"kind":"write","res":"stock","stock":0,"ok":true}`+"\n")
	select {
	case <-ld.Done():
		t.Fatal("done before the file ended")
	default:
	}
	if n := ld.Log.Len(); n < 3 {
		t.Fatalf("%d events in the log while the file is read; want the 3 read before the last line", n)
	}
	if ld.Summary() != nil {
		t.Fatal("a summary before the file ended")
	}
	fmt.Fprint(pw, `{"seq":4,"t":4000,"worker":1,"kind":"write","res":"stock","stock":0,"ok":true}`+"\n")
	fmt.Fprint(pw, `{"summary":{}}`+"\n")
	pw.Close()
	<-ld.Done()
	if ld.Err() != nil {
		t.Fatal(ld.Err())
	}
	if s := ld.Summary(); s == nil || s.LostUpdates != 1 {
		t.Fatalf("summary %+v, want one lost update", s)
	}
}

// A file that is not an event log is refused before anything is shown; a
// bad line later ends the reading with an error naming it.
func TestStreamLogErrors(t *testing.T) {
	if _, err := scenario.StreamLog(io.MultiReader()); !errors.Is(err, check.ErrNotEventLog) {
		t.Fatalf("empty input: %v", err)
	}
	pr, pw := io.Pipe()
	go func() {
		fmt.Fprint(pw, `{"format":"locklab-events","version":2,"scenario":"oversell","strategy":"none","store":"embedded","params":{"workers":2}}`+"\n")
		fmt.Fprint(pw, `{"seq":0,"t":0,"worker":-1,"kind":"init","res":"stock","stock":1}`+"\n")
		fmt.Fprint(pw, "{not json\n")
		pw.Close()
	}()
	ld, err := scenario.StreamLog(pr)
	if err != nil {
		t.Fatal(err)
	}
	<-ld.Done()
	var le *check.LineError
	if !errors.As(ld.Err(), &le) || le.Line != 3 {
		t.Fatalf("err %v, want a LineError on line 3", ld.Err())
	}
	if ld.Log.Len() != 1 {
		t.Fatalf("%d events kept, want the 1 before the bad line", ld.Log.Len())
	}
}

// Reading a log through once, holding none of it, gives the summary that
// loading it whole gives: verdict, counts and the scenario's notes.
func TestSummarizeLogAgreesWithLoadLog(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{{"ttl-expiry", "safe"}, {"retry", "full-jitter"}, {"crash", "safe"}, {"oversell", "none"}} {
		text := strings.Join(logLines(t, c[0], c[1], 3), "\n") + "\n"
		loaded, err := scenario.LoadLog(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		want := scenario.Summarize(loaded.Header, loaded.Log)
		h, got, err := scenario.SummarizeLog(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if h.Scenario != c[0] || got.Box(h) != want.Box(loaded.Header) || got.Verdict != want.Verdict || got.Detail != want.Detail {
			t.Errorf("%s/%s: streamed\n%s%s\nloaded\n%s%s", c[0], c[1], got.Box(h), got.Verdict, want.Box(loaded.Header), want.Verdict)
		}
	}
}
