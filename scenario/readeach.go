package scenario

import (
	"io"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// ReadEach reads an event log through once, handing header the header
// once it is read and each the events in order, and holds none of them:
// the memory it takes does not grow with the log. Its errors are
// ReadRecording's: a bad line stops it, a log that is not a run's whole,
// consistent record is read to its end and then said so.
func ReadEach(r io.Reader, header func(event.Header), each func(event.Event)) error {
	rec := &check.Recording{}
	return check.ReadLog(r, rec, func() {
		if header != nil {
			header(rec.Header)
		}
	}, each)
}
