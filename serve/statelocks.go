package serve

import (
	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
)

// lockState is what /state says of the round's locks: the tally's holds
// and TTL lapses, the numbers /metrics' lock_hold_seconds and
// lock_ttl_lapses_total count over every round.
type lockState struct {
	Holds       int     `json:"holds"`            // holds ended: released, refused or lost
	HoldSeconds float64 `json:"hold_seconds_sum"` // their total length
	TTLLapses   int     `json:"ttl_lapses"`       // locks whose TTL lapsed while held
}

// logPrefix is a log's first n events: a round's log keeps growing while
// /state folds it, and its summary and lock numbers are of one point.
type logPrefix struct {
	l *event.Log
	n int
}

func (p logPrefix) Len() int             { return p.n }
func (p logPrefix) At(i int) event.Event { return p.l.At(i) }

// roundState is the summary and the lock numbers of a log's first n
// events, folded once each.
func roundState(h event.Header, l *event.Log, n int) (*check.Summary, lockState) {
	p := logPrefix{l, n}
	t := check.TallyOf(p)
	return scenario.Summarize(h, p), lockState{Holds: t.Get(check.NHolds),
		HoldSeconds: float64(t.Get(check.NHoldMicros)) / 1e6, TTLLapses: t.Get(check.NLapses)}
}

// Mismatch is the log's own: a prefix is summarized as its log would be.
func (p logPrefix) Mismatch() string { return p.l.Mismatch() }
