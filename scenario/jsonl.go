package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/locklab/locklab/lock/trait"
)

// Format and Version identify a locklab event log.
const (
	Format  = "locklab-events"
	Version = 2 // 2: operations carry "call" (when sent) and "outcome"; version 1 logs still read
)

// Header is the first line of an event log.
type Header struct {
	Format   string  `json:"format"`
	Version  int     `json:"version"`
	Scenario string  `json:"scenario"`
	Strategy string  `json:"strategy"`
	Params   Params  `json:"params"`
	Seed     uint64  `json:"seed"`
	Store    string  `json:"store"`
	Slowmo   float64 `json:"slowmo,omitempty"`
	// Time says how the run kept time: "simulated" (a seeded schedule:
	// the same seed gives the same log), or "real time: why".
	Time      string    `json:"time,omitempty"`
	Lanes     []string  `json:"lanes"`
	Tool      string    `json:"tool"`
	StartedAt time.Time `json:"started_at"`
	// Traits are what the run's lock is: its expiry, token, renewal,
	// server and nodes (absent when the strategy takes no lock, and in
	// logs written before they were recorded: see TraitsOf).
	Traits *trait.Traits `json:"traits,omitempty"`
	// KeyTraits are the traits of the lock keys whose lock differs from
	// the run's (trade-offs' one store per key).
	KeyTraits map[string]trait.Traits `json:"key_traits,omitempty"`
}

// AppendJSON appends e as one JSON object (no newline) to b.
func AppendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.T.Microseconds(), 10)
	if e.Has&HasCall != 0 {
		b = append(b, `,"call":`...)
		b = strconv.AppendInt(b, e.Call.Microseconds(), 10)
	}
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(e.Worker), 10)
	b = append(b, `,"kind":"`...)
	b = append(b, e.Kind.String()...)
	b = append(b, '"')
	b = appendStr(b, "res", e.Res)
	b = appendStr(b, "token", e.Token)
	if e.Has&HasFence != 0 {
		b = append(b, `,"fence":`...)
		b = strconv.AppendInt(b, e.Fence, 10)
	}
	if e.Has&HasTTL != 0 {
		b = append(b, `,"ttl_ms":`...)
		b = appendMillis(b, e.TTL)
	}
	if e.Has&HasDelay != 0 {
		b = append(b, `,"delay_ms":`...)
		b = appendMillis(b, e.Delay)
	}
	if e.Has&HasStock != 0 {
		b = append(b, `,"stock":`...)
		b = strconv.AppendInt(b, e.Stock, 10)
	}
	if e.Has&HasNode != 0 {
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, int64(e.Node), 10)
	}
	if e.Has&HasPeer != 0 {
		b = append(b, `,"peer":`...)
		b = strconv.AppendInt(b, int64(e.Peer), 10)
	}
	if e.Has&HasAttempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if e.Has&HasOK != 0 {
		b = append(b, `,"ok":`...)
		b = strconv.AppendBool(b, e.OK)
	}
	if e.Outcome != OutcomeOK {
		b = appendStr(b, "outcome", e.Outcome.String())
	}
	b = appendStr(b, "code", e.Code)
	b = appendStr(b, "msg", e.Msg)
	return append(b, '}')
}

func appendStr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendQuote(b, v)
}

// wireEvent is an event as read from JSON; pointers tell present fields.
type wireEvent struct {
	Seq     int64    `json:"seq"`
	T       *int64   `json:"t"`
	Call    *int64   `json:"call"`
	Outcome string   `json:"outcome"`
	Worker  *int32   `json:"worker"`
	Kind    string   `json:"kind"`
	Res     string   `json:"res"`
	Token   string   `json:"token"`
	Fence   *int64   `json:"fence"`
	TTL     *Millis  `json:"ttl_ms"`
	Delay   *Millis  `json:"delay_ms"`
	Stock   *int64   `json:"stock"`
	Node    *int16   `json:"node"`
	Peer    *int32   `json:"peer"`
	Attempt *int32   `json:"attempt"`
	OK      *bool    `json:"ok"`
	Code    string   `json:"code"`
	Msg     string   `json:"msg"`
	Summary *Summary `json:"summary"`
}

func (w *wireEvent) event() Event {
	e := Event{Seq: w.Seq, Kind: ParseKind(w.Kind), Res: w.Res, Token: w.Token, Code: w.Code, Msg: w.Msg, Worker: System}
	if w.T != nil {
		e.T = durationOf(*w.T)
	}
	if w.Worker != nil {
		e.Worker = *w.Worker
	}
	if w.Call != nil {
		e.Call, e.Has = durationOf(*w.Call), e.Has|HasCall
	}
	e.Outcome, _ = ParseOutcome(w.Outcome)
	if w.Fence != nil {
		e.Fence, e.Has = *w.Fence, e.Has|HasFence
	}
	if w.TTL != nil {
		e.TTL, e.Has = w.TTL.D(), e.Has|HasTTL
	}
	if w.Delay != nil {
		e.Delay, e.Has = w.Delay.D(), e.Has|HasDelay
	}
	if w.Stock != nil {
		e.Stock, e.Has = *w.Stock, e.Has|HasStock
	}
	if w.Node != nil {
		e.Node, e.Has = *w.Node, e.Has|HasNode
	}
	if w.Peer != nil {
		e.Peer, e.Has = *w.Peer, e.Has|HasPeer
	}
	if w.Attempt != nil {
		e.Attempt, e.Has = *w.Attempt, e.Has|HasAttempt
	}
	if w.OK != nil {
		e.OK, e.Has = *w.OK, e.Has|HasOK
	}
	return e
}

// Recording is an event log read back from a file.
type Recording struct {
	Header  Header
	Events  []Event
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
	err := readLog(r, rec, nil, func(e Event) { rec.Events = append(rec.Events, e) })
	if err == ErrNotEventLog || (err != nil && rec.Header.Format == "") {
		return nil, err
	}
	return rec, err
}

// decodeLog reads an event log: header is called once the header is read,
// add with each event, both on decodeLog's goroutine (readLog hands them
// to another).
func decodeLog(r io.Reader, rec *Recording, header func(), add func(Event)) error {
	lr := lineReader{br: bufio.NewReaderSize(r, 1<<16)}
	dec := decoder{strs: map[string]string{}}
	events := 0
	names := resources{}
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
		e, end, err := dec.line(line, raw, complete)
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
		if e.Kind == KindUnknown {
			continue
		}
		if err := checkEvent(&rec.Header, line, &e); err != nil {
			return err
		}
		if err := names.add(line, e.Res); err != nil {
			return err
		}
		cleanEvent(&e)
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
func readHeader(raw []byte, h *Header) error {
	if jerr := json.Unmarshal(raw, h); jerr != nil || h.Format != Format {
		return ErrNotEventLog
	}
	if h.Version > Version {
		return &LineError{1, fmt.Sprintf("event log version %d is newer than this locklab reads (%d): upgrade locklab", h.Version, Version)}
	}
	if err := checkHeader(h); err != nil {
		return err
	}
	cleanHeader(h)
	return nil
}

// line reads one line after the header: an event, or the end record.
// The fast decoder reads what locklab writes; anything else goes to
// encoding/json.
func (dec *decoder) line(line int, raw []byte, complete bool) (e Event, end *Summary, err error) {
	dec.b, dec.i = raw, 0
	if hasT, hasW, ferr := dec.event(&e); ferr == nil {
		if !hasT || !hasW {
			return e, nil, &LineError{line, `an event needs "t" and "worker"`}
		}
		return e, nil, nil
	}
	var w wireEvent
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
	return w.event(), nil, nil
}

// Writer writes an event log: the header, events, then a summary line.
type Writer struct {
	w   *bufio.Writer
	buf []byte
}

// NewWriter writes h as the first line.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format, h.Version = Format, Version
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
func (w *Writer) Write(evs []Event) error {
	for i := range evs {
		w.buf = append(AppendJSON(w.buf[:0], &evs[i]), '\n')
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
