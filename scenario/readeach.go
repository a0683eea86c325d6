package scenario

import "io"

// ReadEach reads an event log through once, handing header the header
// once it is read and each the events in order, and holds none of them:
// the memory it takes does not grow with the log. Its errors are
// ReadRecording's: a bad line stops it, a log that is not a run's whole,
// consistent record is read to its end and then said so.
func ReadEach(r io.Reader, header func(Header), each func(Event)) error {
	rec := &Recording{}
	return readLog(r, rec, func() {
		if header != nil {
			header(rec.Header)
		}
	}, each)
}

// logBatch is a run of events decoded, handed from the decoding goroutine
// to the one that folds them.
type logBatch struct {
	header bool // the header is read (rec.Header is set): call header first
	events []Event
}

// logBatchLen is how many events a batch carries: large enough that the
// hand-over costs nothing beside the events, small enough (~160 KB) to
// stay in a cache.
const logBatchLen = 1024

// readLog reads an event log: header is called once the header is read,
// add with each event, in order, on the caller's goroutine. The lines are
// decoded on a goroutine of their own while the caller folds the events
// before them, so that reading a long log takes the longer of the two,
// not their sum. It returns decodeLog's error after the events read
// before it.
func readLog(r io.Reader, rec *Recording, header func(), add func(Event)) error {
	batches := make(chan logBatch, 4)
	free := make(chan []Event, 6)
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
		buf := make([]Event, 0, logBatchLen)
		err = decodeLog(r, rec, func() { send(logBatch{header: true}) }, func(e Event) {
			if buf = append(buf, e); len(buf) == logBatchLen {
				send(logBatch{events: buf})
				select {
				case buf = <-free:
				default:
					buf = make([]Event, 0, logBatchLen)
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
