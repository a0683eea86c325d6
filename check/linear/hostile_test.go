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

// The hostile logs a tally must fold in bounded memory: each keeps the
// fold's memory for one of its kinds of outstanding things at its most.
var hostileLogs = map[string]func(emit func(event.Event), n int){
	"reads": hostileReads,
	// The same, and then the first reader of the last resource read
	// writes it: past the fold's bounds, whether that write lost an
	// update is unknown.
	"reads-written": func(emit func(event.Event), n int) {
		hostileReads(emit, n-1)
		r := (n - 2) / event.MaxWorkers % 1200
		emit(event.Event{Worker: 0, Kind: event.KindWrite, Res: "r" + strconv.Itoa(r)}.WithStock(-1).WithOK(true))
	},
	// One early read never followed, then writes on its resource.
	"writes": func(emit func(event.Event), n int) {
		emit(event.Event{Worker: 0, Kind: event.KindRead, Res: "stock"}.WithStock(int64(n)))
		for i := 1; i < n; i++ {
			w := 1 + int32(i%(event.MaxWorkers-1))
			emit(event.Event{Worker: w, Kind: event.KindWrite, Res: "stock"}.WithStock(int64(n - i)).WithOK(true))
		}
	},
	// Renewals never answered, each of its own token.
	"renewals": func(emit func(event.Event), n int) {
		for i := range n {
			emit(event.Event{Worker: int32(i % event.MaxWorkers), Kind: event.KindRenewFailed, Res: "lock",
				Token: "t" + strconv.Itoa(i), Outcome: event.OutcomeIndeterminate, Msg: "i/o timeout"})
		}
	},
}

// hostileReads are n reads over every (worker, resource) pair of 10,000
// workers × 1,200 resources, none followed by a write.
func hostileReads(emit func(event.Event), n int) {
	for i := range n {
		w, r := int32(i%event.MaxWorkers), (i/event.MaxWorkers)%1200
		emit(event.Event{Worker: w, Kind: event.KindRead, Res: "r" + strconv.Itoa(r)}.WithStock(int64(i)))
	}
}

// writeHostile writes n events of the hostile log kind, 1µs apart, each
// answering a call sent 1µs before.
func writeHostile(w io.Writer, kind string, n int) error {
	gen := hostileLogs[kind]
	if gen == nil {
		return fmt.Errorf("no hostile log %q (reads, reads-written, writes, renewals)", kind)
	}
	h := event.Header{Scenario: "oversell", Strategy: "none", Store: "hostile", Time: "simulated",
		Params: event.Params{Workers: event.MaxWorkers}}
	lw, err := check.NewWriter(w, h)
	if err != nil {
		return err
	}
	batch := make([]event.Event, 0, 4096)
	var werr error
	seq := int64(0)
	gen(func(e event.Event) {
		e.Seq, e.T = seq, time.Duration(seq+1)*time.Microsecond
		e = e.WithCall(e.T - time.Microsecond)
		seq++
		if batch = append(batch, e); len(batch) == cap(batch) && werr == nil {
			werr, batch = lw.Write(batch), batch[:0]
		}
	}, n)
	if werr == nil {
		werr = lw.Write(batch)
	}
	if werr != nil {
		return werr
	}
	// An end record, as a finished run writes: the log is read to its
	// verdict, whatever its summary claims (the verdict is its events').
	return lw.Close(&check.Summary{Verdict: "hostile"})
}

// Writes a hostile log for measuring check and replay by hand:
// LOCKLAB_HOSTILE=reads|reads-written|writes|renewals, LOCKLAB_BIGLOG=out.jsonl,
// LOCKLAB_BIGLOG_EVENTS=how many.
func TestWriteHostileLog(t *testing.T) {
	kind, out := os.Getenv("LOCKLAB_HOSTILE"), os.Getenv("LOCKLAB_BIGLOG")
	if kind == "" || out == "" {
		t.Skip("writes a hostile log only when asked: LOCKLAB_HOSTILE, LOCKLAB_BIGLOG, LOCKLAB_BIGLOG_EVENTS")
	}
	n := bigLogEvents(t)
	writeBigLog(t, out, func(w *bufio.Writer) error { return writeHostile(w, kind, n) })
}
