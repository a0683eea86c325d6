package check

import (
	"io"

	"github.com/locklab/locklab/event"
)

// logBatch is a run of events decoded, handed from the decoding goroutine
// to the one that folds them.
type logBatch struct {
	header bool // the header is read (rec.Header is set): call header first
	events []event.Event
}

// logBatchLen is how many events a batch carries: large enough that the
// hand-over costs nothing beside the events, small enough (~160 KB) to
// stay in a cache.
const logBatchLen = 1024

// ReadLog reads an event log into rec (its header and end record, not its
// events): header is called once the header is read,
// add with each event, in order, on the caller's goroutine. The lines are
// decoded on a goroutine of their own while the caller folds the events
// before them, so that reading a long log takes the longer of the two,
// not their sum. It returns DecodeLog's error after the events read
// before it.
func ReadLog(r io.Reader, rec *Recording, header func(), add func(event.Event)) error {
	batches := make(chan logBatch, 4)
	free := make(chan []event.Event, 6)
	stop := make(chan struct{})
	defer close(stop) // the caller's fold panicked: the decoder must not wait forever
	var err error
	go func() {
		defer close(batches)
		send := func(b logBatch) bool {
			select {
			case batches <- b:
				return true
			case <-stop:
				return false
			}
		}
		buf := make([]event.Event, 0, logBatchLen)
		err = DecodeLog(r, rec, func() { send(logBatch{header: true}) }, func(e event.Event) {
			if buf = append(buf, e); len(buf) == logBatchLen {
				send(logBatch{events: buf})
				select {
				case buf = <-free:
				default:
					buf = make([]event.Event, 0, logBatchLen)
				}
			}
		})
		if len(buf) > 0 {
			send(logBatch{events: buf})
		}
	}()
	for b := range batches {
		if b.header && header != nil {
			header()
		}
		for i := range b.events {
			add(b.events[i])
		}
		if b.events != nil {
			select {
			case free <- b.events[:0]:
			default:
			}
		}
	}
	return err // set before batches was closed
}
