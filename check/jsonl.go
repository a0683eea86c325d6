package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/locklab/locklab/event"
)

// wireLine is a line after the header as read by encoding/json: an event,
// or the end record.
type wireLine struct {
	event.Wire
	Summary *Summary `json:"summary"`
}

// Recording is an event log read back from a file.
type Recording struct {
	Header  event.Header
	Events  []event.Event
	Summary *Summary // as recorded; nil when the file has none
}

// LineError is a problem on one line of an event log.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ErrNotEventLog says the input is not a locklab event log at all.
var ErrNotEventLog = errors.New("not a locklab event log (line 1 has no \"format\": \"locklab-events\" header)")

// ReadRecording reads an event log. On a bad line it returns what it read
// before that line together with a *LineError naming it; unknown kinds and
// fields are skipped. A log that is not a run's whole, consistent record
// (no end record, events missing, a header or final read that disagrees
// with the events) is read whole and returned with an *IntegrityError.
func ReadRecording(r io.Reader) (*Recording, error) {
	rec := &Recording{}
	err := ReadLog(r, rec, nil, func(e event.Event) { rec.Events = append(rec.Events, e) })
	if err == ErrNotEventLog || (err != nil && rec.Header.Format == "") {
		return nil, err
	}
	return rec, err
}

// DecodeLog reads an event log into rec (its header and end record, not
// its events): header is called once the header is read, add with each
// event, both on DecodeLog's goroutine (ReadLog hands them to another).
// Its errors are ReadRecording's.
func DecodeLog(r io.Reader, rec *Recording, header func(), add func(event.Event)) error {
	lr := lineReader{br: bufio.NewReaderSize(r, 1<<16)}
	dec := event.NewDecoder()
	events := 0
	names, lastRes := resources{}, ""
	var clean lineCleaner
	chk := logCheck{h: &rec.Header}
	for line := 1; ; line++ {
		raw, complete, err := lr.next()
		if err != nil || lr.total > MaxLogBytes {
			return readError(line, err, rec, &chk)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if line == 1 {
			if err := readHeader(raw, &rec.Header); err != nil {
				return err
			}
			if header != nil {
				header()
			}
			continue
		}
		e, end, err := decodeLine(dec, line, raw, complete)
		switch {
		case err != nil:
			return err
		case end != nil:
			cleanSummary(end)
			rec.Summary = end
			if err := chk.endRecord(line, end); err != nil {
				return err
			}
			continue
		}
		if err := chk.event(line, &e); err != nil {
			return err
		}
		if e.Kind == event.KindUnknown {
			continue
		}
		if err := checkEvent(&rec.Header, line, &e); err != nil {
			return err
		}
		if e.Res != lastRes { // the same as the last event's: counted already
			if err := names.add(line, e.Res); err != nil {
				return err
			}
			lastRes = e.Res
		}
		clean.event(&e)
		if events++; events > maxLogEvents {
			return &LineError{line, fmt.Sprintf("more than %d events; an event log holds at most %d", maxLogEvents, maxLogEvents)}
		}
		add(e)
	}
}

// readError is what ends a log at line: its end (a log with no header is
// no event log; one with its end record checked), a line too long, a
// file too large, or the reader's error.
func readError(line int, err error, rec *Recording, chk *logCheck) error {
	switch {
	case err == io.EOF:
		if line == 1 || rec.Header.Format == "" { // nothing, or only blank lines
			return ErrNotEventLog
		}
		return chk.finish()
	case err == errLineTooLong:
		return &LineError{line, fmt.Sprintf("longer than %d KiB; a line of an event log is at most %d KiB", MaxLineBytes>>10, MaxLineBytes>>10)}
	case err != nil:
		return fmt.Errorf("line %d: %w", line, err)
	}
	return &LineError{line, fmt.Sprintf("the file passes %d GiB; an event log is at most %d GiB", MaxLogBytes>>30, MaxLogBytes>>30)}
}

// readHeader reads line 1 into h, checked and cleaned.
func readHeader(raw []byte, h *event.Header) error {
	if jerr := json.Unmarshal(raw, h); jerr != nil || h.Format != event.Format {
		return ErrNotEventLog
	}
	if h.Version > event.Version {
		return &LineError{1, fmt.Sprintf("event log version %d is newer than this locklab reads (%d): upgrade locklab", h.Version, event.Version)}
	}
	if err := checkHeader(h); err != nil {
		return err
	}
	cleanHeader(h)
	return nil
}

// decodeLine reads one line after the header: an event, or the end record.
// The fast decoder reads what locklab writes; anything else goes to
// encoding/json.
func decodeLine(dec *event.Decoder, line int, raw []byte, complete bool) (e event.Event, end *Summary, err error) {
	if hasT, hasW, ferr := dec.Decode(raw, &e); ferr == nil {
		if !hasT || !hasW {
			return e, nil, &LineError{line, `an event needs "t" and "worker"`}
		}
		return e, nil, nil
	}
	var w wireLine
	if jerr := json.Unmarshal(raw, &w); jerr != nil {
		if !complete {
			return e, nil, &LineError{line, "truncated: the file ends in the middle of an event"}
		}
		return e, nil, &LineError{line, "not a valid event: " + jerr.Error()}
	}
	if w.Summary != nil {
		return e, w.Summary, nil
	}
	if w.T == nil || w.Worker == nil {
		return e, nil, &LineError{line, `an event needs "t" and "worker"`}
	}
	return w.Event(), nil, nil
}

// Writer writes an event log: the header, events, then a summary line.
type Writer struct {
	w   *bufio.Writer
	buf []byte
}

// NewWriter writes h as the first line.
func NewWriter(w io.Writer, h event.Header) (*Writer, error) {
	h.Format, h.Version = event.Format, event.Version
	bw := bufio.NewWriterSize(w, 1<<16)
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	bw.Write(b)
	if err := bw.WriteByte('\n'); err != nil {
		return nil, err
	}
	return &Writer{w: bw}, nil
}

// Write writes events, one per line.
func (w *Writer) Write(evs []event.Event) error {
	for i := range evs {
		w.buf = append(event.AppendJSON(w.buf[:0], &evs[i]), '\n')
		if _, err := w.w.Write(w.buf); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the summary line and flushes.
func (w *Writer) Close(s *Summary) error {
	if s != nil {
		b, err := json.Marshal(struct {
			Summary *Summary `json:"summary"`
		}{s})
		if err != nil {
			return err
		}
		w.w.Write(b)
		w.w.WriteByte('\n')
	}
	return w.w.Flush()
}
