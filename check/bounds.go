package check

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/locklab/locklab/event"
)

// Limits of an event log read from a file. A log is untrusted input: each
// limit is far beyond what a real run writes (its lines are under 1 KiB,
// its runs last seconds to hours), so only a damaged or hostile file meets
// one, and it is then refused with the limit named.
const (
	MaxLineBytes = 1 << 20            // one line (a header with 10000 lanes is ~100 KiB)
	MaxLogBytes  = 4 << 30            // the whole file
	MaxLogEvents = 1 << 24            // events kept
	MaxSpan      = 7 * 24 * time.Hour // virtual time of the last event
	// A resource's name or a token (a run's are tens of bytes), and the
	// resources a log names (a run's are a few, or one per job): what a
	// reader keeps per resource, and a checker per operation, stays small.
	MaxNameBytes = 256
	MaxResources = 1 << 16
)

// maxLogEvents is MaxLogEvents; tests lower it.
var maxLogEvents = MaxLogEvents

// errLineTooLong is a line longer than MaxLineBytes.
var errLineTooLong = errors.New("line too long")

// lineReader reads lines of at most MaxLineBytes and counts the bytes read.
type lineReader struct {
	br    *bufio.Reader
	buf   []byte
	total int64
}

// next returns the next line without its newline. complete is false when
// the input ended without one. err is io.EOF at the end, errLineTooLong,
// or a read error.
func (r *lineReader) next() (line []byte, complete bool, err error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		r.total += int64(len(frag))
		if len(r.buf)+len(frag) > MaxLineBytes+1 { // +1: the newline
			return nil, false, errLineTooLong
		}
		r.buf = append(r.buf, frag...)
		switch {
		case err == nil:
			return r.buf, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(r.buf) > 0 && err == io.EOF:
			return r.buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// checkHeader bounds what a header sizes: workers, lanes and nodes.
func checkHeader(h *event.Header) error {
	p := h.Params
	switch {
	case p.Workers < 0 || p.Workers > event.MaxWorkers:
		return &LineError{1, fmt.Sprintf("header says %d workers; a log holds 0 to %d", p.Workers, event.MaxWorkers)}
	case len(h.Lanes) > event.MaxWorkers:
		return &LineError{1, fmt.Sprintf("header has %d lanes; a log holds at most %d", len(h.Lanes), event.MaxWorkers)}
	case p.Nodes < 0 || p.Nodes > event.MaxNodes:
		return &LineError{1, fmt.Sprintf("header says %d nodes; a log holds 0 to %d", p.Nodes, event.MaxNodes)}
	}
	return nil
}

// checkEvent bounds one event's indices and times by the header: a worker,
// peer or node outside the run, a time outside MaxSpan.
func checkEvent(h *event.Header, line int, e *event.Event) error {
	// A header without a count (hand-made) leaves the limits to bound them.
	workers, nodes := int32(h.Params.Workers), int16(h.Params.Nodes)
	if workers == 0 {
		workers = event.MaxWorkers
	}
	if nodes == 0 {
		nodes = event.MaxNodes
	}
	bad := func(format string, a ...any) error { return &LineError{line, fmt.Sprintf(format, a...)} }
	switch {
	case e.Worker != event.System && (e.Worker < 0 || e.Worker >= workers):
		return bad("worker %d is out of range: the header says %d workers (0 to %d, or -1 for the system)", e.Worker, workers, workers-1)
	case e.Has&event.HasPeer != 0 && (e.Peer < 0 || e.Peer >= workers):
		return bad("peer %d is out of range: the header says %d workers (0 to %d)", e.Peer, workers, workers-1)
	case e.Has&event.HasNode != 0 && (e.Node < 0 || e.Node >= nodes):
		return bad("node %d is out of range: the header says %d node(s) (0 to %d)", e.Node, nodes, nodes-1)
	case e.T < 0 || e.T > MaxSpan:
		return bad("t %s is outside a run: a log spans 0 to %v", micros(e.T), MaxSpan)
	case e.Has&event.HasCall != 0 && (e.Call < 0 || e.Call > MaxSpan):
		return bad("call %s is outside a run: a log spans 0 to %v", micros(e.Call), MaxSpan)
	case e.Has&event.HasTTL != 0 && (e.TTL < -MaxSpan || e.TTL > MaxSpan):
		return bad("ttl_ms %d is beyond %v, the longest a log spans", e.TTL.Milliseconds(), MaxSpan)
	case e.Has&event.HasDelay != 0 && (e.Delay < 0 || e.Delay > MaxSpan):
		return bad("delay_ms %d is outside 0 to %v, the longest a log spans", e.Delay.Milliseconds(), MaxSpan)
	case e.Has&event.HasAttempt != 0 && e.Attempt < 0:
		return bad("attempt %d is negative", e.Attempt)
	case len(e.Res) > MaxNameBytes:
		return bad("res is %d bytes long; a resource's name is at most %d", len(e.Res), MaxNameBytes)
	case len(e.Token) > MaxNameBytes:
		return bad("token is %d bytes long; a token is at most %d", len(e.Token), MaxNameBytes)
	}
	return nil
}

// resources are the names of the resources a log has named so far.
type resources map[string]struct{}

// add notes e's resource; more than MaxResources is an error.
func (r resources) add(line int, res string) error {
	if _, ok := r[res]; ok || res == "" {
		return nil
	}
	if len(r) >= MaxResources {
		return &LineError{line, fmt.Sprintf("more than %d resources; an event log names at most %d", MaxResources, MaxResources)}
	}
	r[res] = struct{}{}
	return nil
}

// micros writes d as a log writes t, or says it is beyond what fits.
func micros(d time.Duration) string {
	if d == math.MaxInt64 || d == math.MinInt64 {
		return "beyond ±292 years"
	}
	return fmt.Sprint(d.Microseconds())
}
