package check

import (
	"sort"

	"github.com/locklab/locklab/event"
)

// Tallies is a run's tally at every playhead: the fold's changes in event
// order, and a copy of the whole tally every tallyEvery events, so the
// tally after any event costs at most tallyEvery events' changes, however
// long the log. The views fold once per frame (Catch up with Add) and seek
// with At.
type Tallies struct {
	fold   *TallyFold
	deltas []tallyDelta
	checks []Tally // checks[i]: the tally after the first (i+1)·tallyEvery events
}

const tallyEvery = 256

// NewTallies returns an empty history.
func NewTallies() *Tallies {
	ts := &Tallies{fold: NewTallyFold()}
	ts.fold.sink = func(d tallyDelta) { ts.deltas = append(ts.deltas, d) }
	return ts
}

// Len is how many events have been folded.
func (ts *Tallies) Len() int { return ts.fold.t.Get(NEvents) }

// Add folds the log's next event.
func (ts *Tallies) Add(e event.Event) {
	ts.fold.Add(e)
	if n := ts.Len(); n%tallyEvery == 0 {
		ts.checks = append(ts.checks, ts.fold.t.Clone())
	}
}

// Fold is the fold behind the history.
func (ts *Tallies) Fold() *TallyFold { return ts.fold }

// Now is the tally after every event folded (shared: Clone it to keep it).
func (ts *Tallies) Now() *Tally { return &ts.fold.t }

// At is the tally after events 0…k (the playhead at event k); k < 0: before
// any.
func (ts *Tallies) At(k int) Tally {
	if k >= ts.Len()-1 {
		return ts.fold.t.Clone()
	}
	var t Tally
	from := 0
	if c := (k + 1) / tallyEvery; c > 0 {
		t = ts.checks[c-1].Clone()
		from = c * tallyEvery
	}
	i := sort.Search(len(ts.deltas), func(i int) bool { return ts.deltas[i].seq >= int64(from) })
	for ; i < len(ts.deltas) && ts.deltas[i].seq <= int64(k); i++ {
		t.apply(ts.deltas[i])
	}
	return t
}

// TallyOf folds events into their tally.
func TallyOf(events Events) Tally {
	f := NewTallyFold()
	for i := range events.Len() {
		f.Add(events.At(i))
	}
	return f.t
}
