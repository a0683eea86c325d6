package check

import (
	"encoding/json"
	"io"
	"time"

	"github.com/locklab/locklab/event"
)

// Report is a run in the lab's JSON schema, plus duration, contention,
// parameters and seed. contention_rate keeps the lab's name and formula:
// workers that never got the lock ÷ workers. denial_rate is what locklab
// calls contention: lock calls denied ÷ lock calls.
type Report struct {
	Scenario       string       `json:"scenario"`
	Strategy       string       `json:"strategy"`
	InitialStock   int64        `json:"initial_stock"`
	FinalStock     int64        `json:"final_stock"`
	TotalAttempts  int          `json:"total_attempts"`
	Successes      int          `json:"successes"`
	Failures       int          `json:"failures"`
	Oversold       bool         `json:"oversold"`
	Entries        []Entry      `json:"entries"`
	Timestamp      time.Time    `json:"timestamp"`
	DurationMs     float64      `json:"duration_ms"`
	ContentionRate float64      `json:"contention_rate"`
	LockCalls      int          `json:"lock_calls"`
	LockDenied     int          `json:"lock_calls_denied"`
	DenialRate     float64      `json:"denial_rate"`
	Params         event.Params `json:"params"`
	Seed           uint64       `json:"seed"`
	Verdict        string       `json:"verdict"`
	Overlaps       int          `json:"overlaps"`
	LostUpdates    int          `json:"lost_updates"`
	// What the run cannot know, said where it happened: operations the
	// server never answered, calls the lock's library gave up on at its
	// own deadline, and where the machine held a real-time run up.
	UnansweredOps int    `json:"indeterminate_ops,omitempty"`
	GaveUpOps     int    `json:"gave_up_ops,omitempty"`
	Machine       string `json:"machine,omitempty"`
}

// NewReport builds the report of a run.
func NewReport(h event.Header, s *Summary) *Report {
	entries := s.Entries
	if entries == nil {
		entries = []Entry{}
	}
	return &Report{Scenario: s.Scenario, Strategy: s.Strategy, InitialStock: s.InitialStock,
		FinalStock: s.FinalStock, TotalAttempts: s.Attempts, Successes: s.Successes,
		Failures: s.Attempts - s.Successes, Oversold: s.Oversold, Entries: entries,
		Timestamp: h.StartedAt, DurationMs: float64(s.Duration.D().Microseconds()) / 1000,
		ContentionRate: s.ContentionRate, LockCalls: s.LockCalls, LockDenied: s.LockDenied, DenialRate: s.DenialRate, Params: h.Params, Seed: h.Seed, Verdict: s.Verdict,
		Overlaps: s.Overlaps, LostUpdates: s.LostUpdates,
		UnansweredOps: s.UnansweredOps, GaveUpOps: s.GaveUpOps, Machine: s.Machine}
}

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
