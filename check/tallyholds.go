package check

import (
	"strings"
	"time"

	"github.com/locklab/locklab/event"
)

// Holds and TTL lapses, as the tally counts them.
//
// A hold is a worker's lock on one key (or a job's reservation) from its
// acquired event to the first release, refused release or lock_lost of
// that key by that worker; a worker's done drops a hold it never ended (a
// crashed holder's), without counting it. A hold lapsed when the log says
// its TTL ran out while it was held: an expired event for its key, a
// release the server refused or a lock a watchdog gave up, or a release
// later than the TTL allowed — counted from the acquire or the last
// renewal. A hold lapses once, however many of these the log shows, and
// an expired event that no hold explains is a lapse of its own. Locks
// without a TTL (a session's, a file's) never lapse.

// HoldBinCount is how many hold-time bins the tally keeps: one per
// doubling from 0.5 ms (a hold of d is in the first bin whose edge it does
// not exceed), and one above the last edge.
const HoldBinCount = 17

const holdBinLow = 500 * time.Microsecond

// HoldBinOf is the bin of a hold of d.
func HoldBinOf(d time.Duration) int {
	i, edge := 0, holdBinLow
	for i < HoldBinCount-1 && d > edge {
		i, edge = i+1, edge*2
	}
	return i
}

// HoldBinEdge is bin i's upper edge (a hold of at most that long); 0 for
// the last, open bin.
func HoldBinEdge(i int) time.Duration {
	if i >= HoldBinCount-1 {
		return 0
	}
	return holdBinLow << i
}

// HoldBin is the count of ended holds in bin i.
func (t *Tally) HoldBin(i int) int { return int(t.c[holdBins+Counter(i)]) }

// HoldTotal is the total length of the ended holds.
func (t *Tally) HoldTotal() time.Duration { return time.Duration(t.c[NHoldMicros]) * time.Microsecond }

// openHold is a hold not ended yet.
type openHold struct {
	res      string
	since    time.Duration
	deadline time.Duration // when its TTL runs out; 0: it has none
	lapsed   bool
}

// holds folds e into the holds and lapses.
func (f *TallyFold) holds(e *event.Event) {
	switch e.Kind {
	case event.KindAcquired:
		w := f.worker(e.Worker)
		if e.Worker < 0 || w.hold(e.Res) >= 0 {
			return
		}
		h := openHold{res: e.Res, since: e.T}
		if e.TTL > 0 {
			h.deadline = e.T + e.TTL
		}
		w.open = append(w.open, h)
	case event.KindRenewed:
		w := f.worker(e.Worker)
		if i := w.hold(e.Res); i >= 0 && e.TTL > 0 && !w.open[i].lapsed {
			w.open[i].deadline = e.T + e.TTL
		}
	case event.KindExpired:
		f.expired(e)
	case event.KindRelease, event.KindReleaseFailed, event.KindLockLost:
		if !event.IsUndo(e) {
			f.endHold(e)
		}
	case event.KindDone:
		f.worker(e.Worker).open = nil
	}
}

// hold is the index of the worker's open hold of res, -1 if none.
func (w *workerState) hold(res string) int {
	for i := range w.open {
		if w.open[i].res == res {
			return i
		}
	}
	return -1
}

// expired marks the hold whose TTL the log says ran out.
func (f *TallyFold) expired(e *event.Event) {
	for i := range f.ws {
		w := &f.ws[i]
		for j := range w.open {
			if h := &w.open[j]; h.res == e.Res && !h.lapsed {
				h.lapsed = true
				f.add(NLapses, 1)
				return
			}
		}
	}
	f.add(NLapses, 1)
}

// endHold ends the hold e releases: of its key, or the worker's only one
// when the release names what the lock guarded rather than the lock (a
// job, where its reservation was held). One node's answer of a quorum
// lock ends the hold it releases; the other nodes' find none.
func (f *TallyFold) endHold(e *event.Event) {
	w := f.worker(e.Worker)
	i := w.hold(e.Res)
	if i < 0 && e.Has&event.HasNode == 0 && len(w.open) == 1 && strings.HasSuffix(w.open[0].res, ":"+e.Res) {
		i = 0
	}
	if i < 0 {
		return
	}
	h := w.open[i]
	w.open = append(w.open[:i], w.open[i+1:]...)
	d := max(e.T-h.since, 0)
	f.add(NHolds, 1)
	f.add(NHoldMicros, d.Microseconds())
	f.add(holdBins+Counter(HoldBinOf(d)), 1)
	if !h.lapsed && h.deadline > 0 && (e.Kind != event.KindRelease || (e.Has&event.HasOK != 0 && !e.OK) || e.T > h.deadline) {
		f.add(NLapses, 1)
	}
}
