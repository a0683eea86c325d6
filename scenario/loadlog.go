package scenario

import (
	"io"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// Loaded is an event log read into a Log, for replay.
type Loaded struct {
	Header  event.Header
	Log     *event.Log
	Summary *check.Summary
}

// LoadLog reads an event log into a Log (compact, as a live run holds it).
// Like ReadRecording it returns what it read before a bad line with the
// *LineError.
func LoadLog(r io.Reader) (*Loaded, error) {
	ld, err := StreamLog(r)
	if err != nil {
		return nil, err
	}
	<-ld.Done()
	return &Loaded{Header: ld.Header, Log: ld.Log, Summary: ld.recorded}, ld.Err()
}

// Loading is an event log being read into a Log on a goroutine of its
// own (its Header with its locks' traits, WithTraits): its Log grows as lines are read (readers take Len and At as from a
// live run's log), and once Done, Summary is the checker's verdict over
// all of it and Err what stopped the reading early, if anything.
type Loading struct {
	Header   event.Header
	Log      *event.Log
	done     chan struct{}
	err      error
	summary  *check.Summary // derived from the events, once done
	recorded *check.Summary // the file's own summary line
}

// Done is closed once the whole log is read and summarised.
func (ld *Loading) Done() <-chan struct{} { return ld.done }

// Err is what stopped the reading before the end of the file (after Done).
func (ld *Loading) Err() error { return ld.err }

// Summary is the summary and verdict derived from the events read (after
// Done).
func (ld *Loading) Summary() *check.Summary { return ld.summary }

// StreamLog reads the header of an event log and returns; the events are
// read on, into the Log, in the background. A file that is not an event
// log, or whose header is bad, is an error at once.
func StreamLog(r io.Reader) (*Loading, error) {
	ld := &Loading{Log: event.NewLog(nil, nil), done: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		defer close(ld.done)
		rec := &check.Recording{}
		// The file's derived events are not trusted: the checker derives
		// them again from its primary events, and the two are compared.
		// So is its closing verdict beat: the verdict said is the one its
		// events show.
		rd := check.NewRederiver()
		var verdict *event.Event
		started := false
		// Not ReadLog: its batches would keep the view waiting for
		// events already read.
		err := check.DecodeLog(r, rec, func() {
			ld.Header, started = WithTraits(rec.Header), true
			rd.Checker.Names = rec.Header.Lanes
			ready <- true
		}, func(e event.Event) {
			if e.Kind == event.KindBeat && e.Code == BeatVerdict {
				v := e // a copy of its own: e itself stays off the heap
				verdict = &v
				return
			}
			rd.Add(e, ld.Log.Append)
		})
		ld.err = err
		if !started && err == nil {
			ld.err = check.ErrNotEventLog // a reader that stopped before any header
		}
		if !started {
			ready <- false
			return
		}
		ld.Log.SetMismatch(rd.Mismatch())
		ld.summary, ld.recorded = Summarize(rec.Header, ld.Log), rec.Summary
		if verdict != nil && err == nil { // a log that is not whole has no verdict to say
			verdict.Msg = ld.summary.Verdict + ". " + ld.summary.Detail
			ld.Log.Append(*verdict)
		}
	}()
	if !<-ready {
		<-ld.done
		return nil, ld.err
	}
	return ld, nil
}

// SummarizeLog reads an event log through once and returns its header and
// the summary its events show, holding none of them: the memory it takes
// does not grow with the log. A bad line is an error.
func SummarizeLog(r io.Reader) (event.Header, *check.Summary, error) {
	rec := &check.Recording{}
	var z *check.Summarizer
	var verdict *event.Event
	err := check.ReadLog(r, rec, func() { z = NewSummarizer(rec.Header) }, func(e event.Event) {
		if e.Kind == event.KindBeat && e.Code == BeatVerdict {
			v := e       // a copy of its own: e itself stays off the heap
			verdict = &v // last, as LoadLog places it
			return
		}
		z.Add(e)
	})
	if err != nil {
		return rec.Header, nil, err
	}
	if verdict != nil {
		z.Add(*verdict)
	}
	return rec.Header, z.Summary(z.Mismatch()), nil
}
