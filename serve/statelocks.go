package serve

import "github.com/locklab/locklab/scenario"

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
	l *scenario.Log
	n int
}

func (p logPrefix) Len() int                { return p.n }
func (p logPrefix) At(i int) scenario.Event { return p.l.At(i) }

// roundState is the summary and the lock numbers of a log's first n
// events, folded once each.
func roundState(h scenario.Header, l *scenario.Log, n int) (*scenario.Summary, lockState) {
	p := logPrefix{l, n}
	t := scenario.TallyOf(p)
	return scenario.Summarize(h, p), lockState{Holds: t.Get(scenario.NHolds),
		HoldSeconds: float64(t.Get(scenario.NHoldMicros)) / 1e6, TTLLapses: t.Get(scenario.NLapses)}
}

// Mismatch is the log's own: a prefix is summarized as its log would be.
func (p logPrefix) Mismatch() string { return p.l.Mismatch() }
