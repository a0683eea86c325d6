package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/locklab/locklab/event"
)

// pollEvery is how often an event stream looks for new events.
const pollEvery = 50 * time.Millisecond

// events streams the current round's log as Server-Sent Events: one
// "message" per event (its id the event's seq, its data the event as in a
// JSONL log), a "round" event when a new round starts, and a comment every
// few seconds to keep proxies from closing a quiet stream. A client that
// reconnects with Last-Event-ID resumes after that event of the round.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flush, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		fail(w, http.StatusServiceUnavailable, "too many event streams open: at most "+strconv.Itoa(MaxStreams))
		return
	}
	rd := s.current()
	cursor := 0
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.Atoi(id); err == nil && n >= 0 {
			cursor = min(n+1, rd.out.Run.Log.Len())
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	buf = roundEvent(buf[:0], rd)
	if _, err := w.Write(buf); err != nil {
		return
	}
	flush.Flush()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	quiet := 0
	var evs []event.Event
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		case <-tick.C:
		}
		buf = buf[:0]
		evs, cursor = readSome(rd.out.Run.Log, cursor, evs[:0])
		buf = appendEvents(buf, evs)
		if now := s.current(); now != rd && cursor == rd.out.Run.Log.Len() {
			select {
			case <-rd.out.Run.Done(): // the old round's last events are out
				rd, cursor = now, 0
				buf = roundEvent(buf, rd)
			default:
			}
		}
		if len(buf) == 0 {
			if quiet++; quiet < int(15*time.Second/pollEvery) {
				continue
			}
			buf = append(buf, ": still here\n\n"...)
		}
		quiet = 0
		if _, err := w.Write(buf); err != nil {
			return
		}
		flush.Flush()
	}
}

// batch is the most events a stream sends at one tick.
const batch = 4096

// readSome appends up to batch events of l from cursor to dst.
func readSome(l *event.Log, cursor int, dst []event.Event) ([]event.Event, int) {
	end := min(l.Len(), cursor+batch)
	for ; cursor < end; cursor++ {
		dst = append(dst, l.At(cursor))
	}
	return dst, cursor
}

func roundEvent(b []byte, rd *round) []byte {
	h := rd.out.Run.Header
	b = append(b, "event: round\ndata: {\"round\":"...)
	b = strconv.AppendInt(b, int64(rd.n), 10)
	b = append(b, `,"scenario":`...)
	b = strconv.AppendQuote(b, h.Scenario)
	b = append(b, `,"strategy":`...)
	b = strconv.AppendQuote(b, h.Strategy)
	return append(b, "}\n\n"...)
}

func appendEvents(b []byte, evs []event.Event) []byte {
	for i := range evs {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, evs[i].Seq, 10)
		b = append(b, "\ndata: "...)
		b = event.AppendJSON(b, &evs[i])
		b = append(b, "\n\n"...)
	}
	return b
}
