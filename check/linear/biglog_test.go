package linear

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// writeRepeated writes a log of about n events: rec's run again and again,
// each time after the last, its seq counting on and its tokens its own, so
// the long log is one a long run could have written. Its end record is
// rec's.
func writeRepeated(w io.Writer, rec *check.Recording, n int) error {
	if len(rec.Events) == 0 {
		return fmt.Errorf("the log to repeat has no events")
	}
	span := rec.Events[len(rec.Events)-1].T + time.Millisecond
	lw, err := check.NewWriter(w, rec.Header)
	if err != nil {
		return err
	}
	batch := make([]event.Event, 0, len(rec.Events))
	seq := int64(0)
	for round := 0; int(seq) < n; round++ {
		shift := time.Duration(round) * span
		if shift+span > check.MaxSpan {
			return fmt.Errorf("%d events of this log would pass the %v a log spans", n, check.MaxSpan)
		}
		batch = batch[:0]
		for _, e := range rec.Events {
			e.Seq, e.T = seq, e.T+shift
			seq++
			if e.Has&event.HasCall != 0 {
				e.Call += shift
			}
			if e.Token != "" {
				e.Token += "." + strconv.Itoa(round)
			}
			batch = append(batch, e)
		}
		if err := lw.Write(batch); err != nil {
			return err
		}
	}
	return lw.Close(rec.Summary)
}

// Writes a long log for measuring check by hand (scripts/biglog.sh):
// LOCKLAB_BIGLOG=out.jsonl, LOCKLAB_BIGLOG_FROM=a run's log,
// LOCKLAB_BIGLOG_EVENTS=how many.
func TestWriteBigLog(t *testing.T) {
	out, from := os.Getenv("LOCKLAB_BIGLOG"), os.Getenv("LOCKLAB_BIGLOG_FROM")
	if out == "" || from == "" {
		t.Skip("writes a long log only when asked: LOCKLAB_BIGLOG, LOCKLAB_BIGLOG_FROM, LOCKLAB_BIGLOG_EVENTS")
	}
	n := bigLogEvents(t)
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rec, err := check.ReadRecording(in)
	if err != nil {
		t.Fatal(err)
	}
	writeBigLog(t, out, func(w *bufio.Writer) error { return writeRepeated(w, rec, n) })
}

// bigLogEvents is LOCKLAB_BIGLOG_EVENTS, the count of events to write.
func bigLogEvents(t *testing.T) int {
	n, err := strconv.Atoi(os.Getenv("LOCKLAB_BIGLOG_EVENTS"))
	if err != nil || n <= 0 {
		t.Fatalf("LOCKLAB_BIGLOG_EVENTS must be a count of events (got %q)", os.Getenv("LOCKLAB_BIGLOG_EVENTS"))
	}
	return n
}

// writeBigLog writes the file out through a large buffer.
func writeBigLog(t *testing.T, out string, write func(*bufio.Writer) error) {
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
