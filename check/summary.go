package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/mattn/go-runewidth"
)

// Outcome codes of a worker's done event.
const (
	FailLock   = "lock"      // the lock was not obtained
	FailStock  = "stock"     // nothing left to sell
	FailError  = "error"     // a Redis error
	FailCancel = "cancelled" // the run was stopped first
)

// FailIndeterminate is the outcome code of a worker stopped by an
// operation the server did not answer: it may or may not have happened.
const FailIndeterminate = "indeterminate"

// BeatMachine is the beat that says the machine, not the scenario, held
// a step of a real-time run up.
const BeatMachine = "machine"

// Entry is one worker's attempt, in the lab's JSON schema.
type Entry struct {
	ProcessID    string  `json:"process_id"`
	LockAcquired bool    `json:"lock_acquired"`
	StockBefore  int64   `json:"stock_before"`
	StockAfter   int64   `json:"stock_after"`
	DurationMs   float64 `json:"duration_ms"`
	Success      bool    `json:"success"`
	Error        *string `json:"error"`
}

// Summary is what a run amounts to: a pure fold over its events.
type Summary struct {
	Scenario    string `json:"scenario"`
	Strategy    string `json:"strategy"`
	Workers     int    `json:"workers"`
	Attempts    int    `json:"total_attempts"`
	Successes   int    `json:"successes"`
	FailedStock int    `json:"failed_stock"`
	FailedLock  int    `json:"failed_lock"`
	// FailedStale are the workers whose stale write the resource refused
	// (a fence): the lock lapsed under them, and fencing kept the data.
	FailedStale   int          `json:"failed_stale"`
	FailedError   int          `json:"failed_error"`
	Cancelled     int          `json:"cancelled"`
	HasStock      bool         `json:"-"`
	onceOnly      bool         // the run has an effect allowed once (a job's, a credit)
	InitialStock  int64        `json:"initial_stock"`
	FinalStock    int64        `json:"final_stock"`
	ExpectedStock int64        `json:"expected_stock"`
	Duration      event.Millis `json:"duration_ms"`
	// ContentionRate is the lab's field under its real meaning: workers
	// that never got the lock ÷ workers that finished.
	ContentionRate float64 `json:"contention_rate"`
	NeverGotLock   int     `json:"never_got_lock"`
	LockCalls      int     `json:"lock_calls"`
	// LockDenied is how many lock calls were denied; DenialRate, locklab's
	// contention, is LockDenied ÷ LockCalls.
	LockDenied int `json:"lock_calls_denied"`
	// DeniedNoQuorum are the denials of a quorum that the nodes saying
	// the lock was held could not have caused alone: the others refused
	// or did not answer.
	DeniedNoQuorum int `json:"lock_calls_denied_no_quorum,omitempty"`
	// WritesRefused are writes refused because the value changed since
	// their read: an optimistic strategy's contention.
	WritesRefused  int     `json:"writes_refused"`
	Retries        int     `json:"retries"`
	DenialRate     float64 `json:"denial_rate"`
	Overlaps       int     `json:"overlaps"`      // entries into an occupied critical section
	OverlapPairs   int     `json:"overlap_pairs"` // pairs of workers inside together
	LostUpdates    int     `json:"lost_updates"`
	LostUpdatesMax int     `json:"lost_updates_max,omitempty"` // when unanswered writes make it a bound
	LostUnknown    bool    `json:"lost_updates_unknown,omitempty"`
	// Untracked says which counts a log past the fold's bounds left
	// unknown or bounds (tallybounds.go).
	Untracked []string `json:"untracked,omitempty"`
	// StaleLanded are the writes surely overtaken: computed from a read
	// that a write sent after its answer and answered before this write was
	// sent had made stale (the log's lost_update violations).
	StaleLanded int `json:"stale_writes_landed"`
	// Operations the server refused, or did not answer (their effect is
	// unknown); the first error of each in the server's words.
	FailedOps        int    `json:"failed_ops,omitempty"`
	UnansweredOps    int    `json:"indeterminate_ops,omitempty"`
	UnansweredWrites int    `json:"indeterminate_writes,omitempty"`
	LandedWrites     int    `json:"indeterminate_writes_landed,omitempty"`
	ServerError      string `json:"server_error,omitempty"`
	// GaveUpOps are the operations the lock's own library stopped waiting
	// for on a deadline of its own: whether they happened is not known,
	// but no server or link failed, so the verdict stays the lock's.
	// GaveUpKinds names them by kind; GaveUpMsg is the first, in words.
	GaveUpOps   int    `json:"gave_up_ops,omitempty"`
	GaveUpKinds string `json:"gave_up_kinds,omitempty"`
	GaveUpMsg   string `json:"gave_up_msg,omitempty"`
	// Machine says where the machine, not the scenario, held a real-time
	// run up (its first such step).
	Machine         string `json:"machine,omitempty"`
	retry           string // the run's retry policy, for the advice
	retryPol        retryOf
	UnansweredError string `json:"indeterminate_error,omitempty"`
	// UnansweredKinds names the unanswered operations by kind.
	UnansweredKinds string `json:"indeterminate_kinds,omitempty"`
	FailedMsg       string `json:"-"`
	// Mismatch says how the derived events a log recorded differ from what
	// its events show; the verdict is always the one its events show.
	Mismatch       string  `json:"mismatch,omitempty"`
	Duplicates     int     `json:"duplicates"`
	Deadlocks      int     `json:"deadlocks"`
	FenceRejected  int     `json:"fence_rejected"`
	Crashes        int     `json:"crashes"`
	LocksLost      int     `json:"locks_lost"`
	ReleaseRefused int     `json:"release_refused"`
	Violations     int     `json:"violations"`
	Oversold       bool    `json:"oversold"`
	Verdict        string  `json:"verdict"`
	Detail         string  `json:"detail"`
	Entries        []Entry `json:"-"`
	// Notes are the scenario's own findings, label and value.
	Notes [][2]string `json:"notes,omitempty"`
	// nodesDown are what the faults that took a node away said.
	nodesDown []string
	// netFaults are the first network faults put on links.
	netFaults []string
	// takesLock: by its header's traits, the run takes a lock that keeps
	// the others out somewhere (not none, not optimistic concurrency).
	takesLock bool
	words     Words
}

// Words are what a run's scenario adds to the verdict its events show.
type Words struct {
	Notes NoteFold // the scenario's own findings (nil: none)
	// Lock says the strategy is a lock (not "atomic", not an idempotency
	// key); Note says what it is, in a few words, for the box.
	Lock bool
	Note string
	// Duplicate says why the scenario's effect was applied twice, Detail
	// what the verdict means in the scenario ("": the general words); nil
	// when the scenario has no words of its own.
	Duplicate func(strategy string) string
	Detail    func(s *Summary) string
}

// NoteFold folds a run's events, one at a time, into a scenario's notes.
type NoteFold interface {
	Add(e *event.Event)
	Notes() [][2]string
}

type workerFold struct {
	seen, acquired, inCS, done, ok bool
	code, msg                      string
	before, after                  int64
	start, end                     time.Duration
}

// Events is a sequence of events: a *Log, or a Slice.
type Events interface {
	Len() int
	At(i int) event.Event
}

// Slice adapts []Event to Events.
type Slice []event.Event

// Len is the number of events.
func (s Slice) Len() int { return len(s) }

// At returns event i.
func (s Slice) At(i int) event.Event { return s[i] }

// SummarizeWith folds a run's events into its summary, in its scenario's
// words. The header gives the scenario, strategy, parameters and traits.
func SummarizeWith(h event.Header, events Events, w Words) *Summary {
	z := NewSummarizerWith(h, w)
	for i := range events.Len() {
		z.Add(events.At(i))
	}
	if m, ok := events.(interface{ Mismatch() string }); ok && m.Mismatch() != "" {
		return z.Summary(m.Mismatch()) // a loaded log's, against its file
	}
	return z.Summary(z.fold.Mismatch())
}

// A Summarizer folds a log's events into its summary one at a time, so a
// log read from a file need not be held: Add each event in order, then
// Summary. The checker derives the violations again from the primary
// events; the derived events the log carries are only compared with them.
type Summarizer struct {
	s        *Summary
	ws       []workerFold
	stockRes string
	fold     *TallyFold
	notes    NoteFold
}

// NewSummarizerWith returns a summarizer for a run with header h, whose
// scenario's words are w.
func NewSummarizerWith(h event.Header, w Words) *Summarizer {
	z := &Summarizer{s: &Summary{Scenario: h.Scenario, Strategy: h.Strategy, Workers: h.Params.Workers, retry: h.Params.Retry,
		retryPol:  retryOf{h.Params.RetryPolicy()},
		takesLock: takesLock(&h), words: w}, fold: NewTallyFold(), notes: w.Notes}
	z.fold.Checker().Names = h.Lanes
	n := h.Params.Workers
	if n < 0 || n > event.MaxWorkers { // a damaged header must not cost gigabytes
		n = 0
	}
	z.ws = make([]workerFold, n)
	return z
}

// Add folds the log's next event. Every count is the tally's; the
// summarizer keeps only what the lab's per-worker entries show.
func (z *Summarizer) Add(ev event.Event) {
	z.fold.Add(ev)
	if z.notes != nil {
		n := ev // the notes' copy: ev itself stays off the heap
		z.notes.Add(&n)
	}
	s, e := z.s, &ev
	if e.T > s.Duration.D() {
		s.Duration = event.Millis(e.T)
	}
	switch e.Kind {
	case event.KindViolation, event.KindDeadlock:
		return // derived again by the tally's checker
	case event.KindBeat:
		if e.Code == BeatMachine && s.Machine == "" {
			s.Machine = e.Msg
		}
		if e.Code == event.CodeNetOn && len(s.netFaults) < 4 {
			s.netFaults = append(s.netFaults, e.Msg)
		}
	case event.KindNodeDown:
		s.nodesDown = append(s.nodesDown, e.Msg)
	case event.KindInit:
		if e.Code == LimitOnce {
			s.onceOnly = true
		}
		if e.Has&event.HasStock != 0 && z.stockRes == "" {
			z.stockRes = e.Res
		}
		return
	}
	if e.Worker == event.System {
		return
	}
	if e.Worker < 0 || int(e.Worker) >= len(z.ws) { // an index a damaged log made up
		return
	}
	w := &z.ws[e.Worker]
	if !w.seen {
		w.seen, w.start, w.before, w.after = true, e.T, -1, -1
	}
	switch e.Kind {
	case event.KindAcquired:
		w.acquired = true
	case event.KindWorkStart:
		w.inCS = true
	case event.KindRead:
		if w.before < 0 && e.Has&event.HasStock != 0 {
			w.before, w.after = e.Stock, e.Stock
		}
	case event.KindWrite:
		if e.Has&event.HasStock != 0 && (e.Has&event.HasOK == 0 || e.OK) {
			if w.before < 0 {
				w.before = e.Stock + 1
			}
			w.after = e.Stock
		}
	case event.KindDone:
		w.done, w.ok, w.code, w.msg, w.end = true, e.OK, e.Code, e.Msg, e.T
	}
}

// Mismatch says how the derived events among those added differ from
// the checker's ("" if they agree).
func (z *Summarizer) Mismatch() string { return z.fold.Mismatch() }

// Summary is the summary of the events added; mismatch says how the
// log's own derived events differ from the checker's ("" if they agree).
// Its counts are the tally's.
func (z *Summarizer) Summary(mismatch string) *Summary {
	s, ws, t := z.s, z.ws, z.fold.Tally()
	for i := range ws {
		w := &ws[i]
		if !w.done {
			continue
		}
		e := Entry{ProcessID: WorkerName(int32(i)), LockAcquired: w.acquired,
			StockBefore: w.before, StockAfter: w.after, Success: w.ok,
			DurationMs: float64((w.end - w.start).Microseconds()) / 1000}
		if !w.ok {
			msg := w.msg
			e.Error = &msg
		}
		s.Entries = append(s.Entries, e)
	}
	s.fromTally(t)
	s.FailedMsg, s.UnansweredError, s.GaveUpMsg = z.fold.firstFailed, z.fold.firstUnanswered, z.fold.firstGaveUp
	s.ServerError, s.Mismatch = s.FailedMsg, mismatch
	if z.notes != nil {
		s.Notes = z.notes.Notes()
	}
	s.verdict()
	s.gaveUpWords()
	s.untrackedVerdict()
	if s.Mismatch != "" {
		s.Detail = s.Mismatch + " " + s.Detail
	}
	return s
}

// fromTally sets the summary's counts from the tally.
func (s *Summary) fromTally(t *Tally) {
	s.Attempts, s.Successes = t.Get(NFinished), t.Get(NDoneOK)
	s.FailedLock, s.FailedStale, s.FailedStock = t.Get(NDoneLock), t.Get(NDoneStale), t.Get(NDoneStock)
	s.FailedError, s.Cancelled = t.Get(NDoneError)+t.Get(NDoneUnanswered), t.Get(NDoneCancelled)
	s.NeverGotLock = t.Get(NNeverGotLock)
	if s.Attempts > 0 {
		s.ContentionRate = float64(s.NeverGotLock) / float64(s.Attempts)
	}
	s.LockCalls, s.LockDenied, s.DeniedNoQuorum = t.Get(NLockCalls), t.Denied(), t.Get(NDeniedNoQuorum)
	if s.LockCalls > 0 {
		s.DenialRate = float64(s.LockDenied) / float64(s.LockCalls)
	}
	s.WritesRefused, s.Retries = t.Get(NWritesRefused), t.Get(NRetries)
	s.HasStock, s.InitialStock, s.FinalStock = t.Get(NHasStock) > 0, int64(t.Get(NInitialStock)), int64(t.Get(NCurrentStock))
	s.ExpectedStock = s.InitialStock - int64(s.Successes)
	s.LostUpdates, s.LostUpdatesMax = t.Get(NLostUpdates), 0
	if m := t.Get(NLostUpdatesMax); m > s.LostUpdates {
		s.LostUpdatesMax = m
	}
	s.LostUnknown, s.Untracked = t.LostUnknown(), t.UntrackedWords()
	s.StaleLanded, s.FenceRejected = t.Get(NStaleLanded), t.Get(NStaleRefused)
	s.Overlaps, s.OverlapPairs, s.Duplicates, s.Deadlocks = t.Get(NOverlaps), t.Get(NOverlapPairs), t.Get(NDuplicates), t.Get(NDeadlocks)
	s.Oversold = t.Get(NOversold) > 0
	s.Violations = t.Get(NViolations)
	s.Crashes, s.LocksLost, s.ReleaseRefused = t.Get(NCrashes), t.Get(NLocksLost), t.Get(NReleaseRefused)
	s.FailedOps, s.UnansweredOps = t.FailedOps(), t.UnansweredOps()
	s.UnansweredWrites, s.LandedWrites = t.Get(NUnansweredWrites), t.Get(NLandedWrites)
	s.UnansweredKinds = t.UnansweredWords()
	s.GaveUpOps, s.GaveUpKinds = t.GaveUpOps(), t.GaveUpWords()
}

func (s *Summary) verdict() {
	if s.serverVerdict() {
		return
	}
	lost := s.HasStock && s.ExpectedStock != s.FinalStock // a run without a stock counter has nothing to lose there
	nolock := s.Strategy == "none" || !s.words.Lock
	switch {
	case s.HasStock && int64(s.Successes) > s.InitialStock:
		s.Oversold = true
		s.Verdict = fmt.Sprintf("OVERSOLD — %d sold of %d in stock", s.Successes, s.InitialStock)
		s.Detail = fmt.Sprintf("The counter reads %d, yet %d sales went through: %s update(s) were lost because workers read the stock before others wrote it.",
			s.FinalStock, s.Successes, s.lostWords())
	case s.Duplicates > 0:
		s.Verdict = fmt.Sprintf("DUPLICATE — applied %d times, once allowed", s.Duplicates+1)
		s.Detail = "Two workers passed the \"already done?\" check before either recorded it."
		if d := s.words.Duplicate; d != nil {
			s.Detail = d(s.Strategy)
		}
	case s.Deadlocks > 0 && s.Overlaps > 0:
		s.Verdict = fmt.Sprintf("DEADLOCK, then %s", s.overlapWords())
		s.Detail = "The workers waited in a circle until the TTLs broke it; then each took the other's expired lock and both were inside at once."
	case s.Deadlocks > 0:
		s.Verdict = "DEADLOCK"
		s.Detail = "The workers waited for each other in a circle."
	case s.Overlaps > 0 && s.LostUpdates == 0 && s.FenceRejected > 0 && !lost:
		s.Verdict = fmt.Sprintf("SAVED BY FENCING — %s; %d stale write(s) rejected", s.overlapWords(), s.FenceRejected)
		s.Detail = "Two workers were inside at once, but the resource refused the older fence: the data is right."
	case s.Overlaps > 0 && s.LostUpdates == 0 && s.onceOnly && nolock && !lost:
		// Nothing kept the workers apart, and nothing had to: the
		// effect stayed single (a duplicate is caught above).
		s.Verdict = fmt.Sprintf("SAVED BY IDEMPOTENCY — %s; the effect applied once", s.overlapWords())
		s.Detail = "Two workers ran it at once — there is no lock here to keep them apart; the idempotency key kept the effect single."
	case s.Overlaps > 0 || s.LostUpdates > 0:
		s.Verdict = fmt.Sprintf("UNSAFE — %s; %s lost update(s)", s.overlapWords(), s.lostWords())
		s.Detail = s.unsafeDetail(nolock)
	case s.HasStock && lost:
		s.Verdict = fmt.Sprintf("UNSAFE — the stock reads %d, %d sale(s) say %d", s.FinalStock, s.Successes, s.ExpectedStock)
		s.Detail = "No overlap and no lost update were seen, yet the counter disagrees with the sales: something wrote it outside the workers' view."
	case s.Cancelled > 0:
		s.Verdict = fmt.Sprintf("INTERRUPTED — %d worker(s) stopped before they finished", s.Cancelled)
		s.Detail = "No safety violation up to the moment the run was stopped."
	case s.FailedError > 0:
		s.Verdict = fmt.Sprintf("INCOMPLETE — %d worker(s) stopped by an error", s.FailedError)
		s.Detail = "No safety violation among the workers that finished."
		s.faultWords()
	case s.HasStock && s.Successes < int(s.InitialStock) && s.FailedLock > 0:
		s.Verdict = fmt.Sprintf("CORRECT, UNDERSOLD — %d sold of %d in stock", s.Successes, s.InitialStock)
		s.Detail = s.undersoldDetail()
	default:
		s.Verdict = "CORRECT"
		if s.HasStock {
			s.Detail = fmt.Sprintf("Exactly %d sold of %d in stock; no overlap, no lost update.", s.Successes, s.InitialStock)
		} else {
			s.Detail = "No safety violation."
		}
	}
	if d := s.words.Detail; d != nil {
		if t := d(s); t != "" {
			s.Detail = t
		}
	}
}

// unsafeDetail says how an unsafe run went wrong: lost updates alone, or
// workers inside at once with no lock (or a lock that failed).
func (s *Summary) unsafeDetail(nolock bool) string {
	switch {
	case s.Overlaps == 0:
		return "Writes were computed from stale reads: their updates were lost."
	case nolock && s.Duplicates == 0 && s.LostUpdates == 0:
		return "Two workers ran it at once — there is no lock here to keep them apart; the effect still happened only once."
	case nolock:
		return "Two workers ran it at once — there is no lock here to keep them apart."
	}
	return "Two workers were inside the critical section at once: the lock did not keep them apart."
}

// undersoldDetail says why stock was left: workers gave up on a busy lock
// (and what would have let them wait), or a quorum was out of reach.
func (s *Summary) undersoldDetail() string {
	if s.DeniedNoQuorum > 0 {
		d := fmt.Sprintf("No oversell, but %d worker(s) gave up without the lock while stock was left; %d of %d denial(s) fell short of a quorum because nodes refused or did not answer, not because the lock was held.",
			s.FailedLock, s.DeniedNoQuorum, s.LockDenied)
		if s.UnansweredKinds != "" {
			d += " Unanswered: " + s.UnansweredKinds + "."
		}
		return d
	}
	fix := "add --retry full-jitter"
	if s.retry != "" && s.retry != "none" {
		fix = "allow more retries (--max-retries)"
	}
	return fmt.Sprintf("No oversell, but %d worker(s) gave up on a busy lock while stock was left: %s.", s.FailedLock, fix) + s.retryBudget()
}

// Box renders the summary as the lab's results box; its borders line up
// whatever the values.
func (s *Summary) Box(h event.Header) string {
	return drawBox(s.boxRows(h)) + "  " + s.Verdict + "\n  " + s.Detail + "\n"
}

// boxRows are the results box's sections, each a list of label and value.
func (s *Summary) boxRows(h event.Header) [][][2]string {
	title := fmt.Sprintf("%s (%d workers", s.Scenario, s.Workers)
	if s.HasStock {
		title += fmt.Sprintf(", stock %d", s.InitialStock)
	}
	title += ")"
	sections := [][][2]string{
		{{"Scenario", title}, {"Lock Strategy", s.Strategy + s.words.Note}, {"Store", h.Store}, {"Seed", fmt.Sprint(h.Seed)}},
		{{"Total Attempts", fmt.Sprint(s.Attempts)}, {"Successful", fmt.Sprint(s.Successes)},
			{"Failed (stock)", fmt.Sprint(s.FailedStock)}, {"Failed (lock)", fmt.Sprint(s.FailedLock)}},
	}
	if s.FailedStale > 0 {
		sections[1] = append(sections[1], [2]string{"Failed (stale)", fmt.Sprintf("%d (write refused: stale fence)", s.FailedStale)})
	}
	if s.FailedError > 0 {
		sections[1] = append(sections[1], [2]string{"Failed (error)", fmt.Sprint(s.FailedError)})
	}
	if s.Cancelled > 0 {
		sections[1] = append(sections[1], [2]string{"Interrupted", fmt.Sprint(s.Cancelled)})
	}
	if s.HasStock {
		sections = append(sections, [][2]string{{"Initial Stock", fmt.Sprint(s.InitialStock)},
			{"Final Stock", fmt.Sprint(s.FinalStock)}, {"Expected Stock", fmt.Sprint(s.ExpectedStock)},
			{"Sold", fmt.Sprintf("%d of %d", s.Successes, s.InitialStock)}})
	}
	sections = append(sections, [][2]string{
		{"Total Duration", fmt.Sprintf("%.2f ms", float64(s.Duration.D().Microseconds())/1000)},
		{"Lock Calls", fmt.Sprint(s.LockCalls)},
		{"Contention", s.contentionWords()},
		{"Never Got Lock", fmt.Sprintf("%.0f%% of workers (%d; lab: contention_rate)", s.ContentionRate*100, s.NeverGotLock)},
		{"Violations", s.ViolationWords()},
		{"Overlap Entries", thousands(s.Overlaps)}, {"Overlap Pairs", thousands(s.OverlapPairs)}, {"Lost Updates", s.lostWords()}})
	last := len(sections) - 1
	if s.HasStock || s.LostUpdates > 0 || s.StaleLanded > 0 || s.FenceRejected > 0 {
		sections[last] = append(sections[last], [2]string{"Stale Writes", fmt.Sprintf("%d landed, %d refused", s.StaleLanded, s.FenceRejected)})
	}
	for _, kv := range []struct {
		label string
		n     int
	}{{"Retries", s.Retries}, {"Duplicates", s.Duplicates}, {"Deadlocks", s.Deadlocks},
		{"Crashes", s.Crashes}, {"Locks Lost", s.LocksLost}, {"Release Refused", s.ReleaseRefused}} {
		if kv.n > 0 {
			sections[last] = append(sections[last], [2]string{kv.label, fmt.Sprint(kv.n)})
		}
	}
	if s.GaveUpOps > 0 {
		sections[last] = append(sections[last], [2]string{"Library Gave Up", fmt.Sprintf("%d (%s), at its own deadline", s.GaveUpOps, s.GaveUpKinds)})
	}
	for i, u := range s.Untracked {
		label := ""
		if i == 0 {
			label = "Untracked"
		}
		sections[last] = append(sections[last], [2]string{label, u})
	}
	if len(s.Notes) > 0 {
		sections = append(sections, s.Notes)
	}
	return sections
}

// drawBox draws sections of label and value in a double-lined box under
// its title; a row with no label goes on the one above.
func drawBox(sections [][][2]string) string {
	const label = 17
	width := runewidth.StringWidth("SIMULATION RESULTS")
	for _, sec := range sections {
		for _, kv := range sec {
			width = max(width, label+runewidth.StringWidth(kv[1]))
		}
	}
	var b strings.Builder
	bar := strings.Repeat("═", width+4)
	line := func(text string) {
		b.WriteString("║  " + text + strings.Repeat(" ", width-runewidth.StringWidth(text)) + "  ║\n")
	}
	b.WriteString("╔" + bar + "╗\n")
	pad := (width - runewidth.StringWidth("SIMULATION RESULTS")) / 2
	line(strings.Repeat(" ", pad) + "SIMULATION RESULTS")
	for _, sec := range sections {
		b.WriteString("╠" + bar + "╣\n")
		for _, kv := range sec {
			name := kv[0] + ":"
			if kv[0] == "" { // a row that goes on the one above
				name = ""
			}
			line(fmt.Sprintf("%-*s%s", label, name, kv[1]))
		}
	}
	b.WriteString("╚" + bar + "╝\n")
	return b.String()
}

// contentionWords is the summary's contention: lock calls denied, or, for
// a strategy without a lock, writes refused because the value changed.
func (s *Summary) contentionWords() string {
	if s.LockCalls == 0 && s.WritesRefused > 0 {
		return fmt.Sprintf("%d write(s) refused: the value changed since their read (no lock calls)", s.WritesRefused)
	}
	w := fmt.Sprintf("%.0f%% of lock calls denied (%d)", s.DenialRate*100, s.LockDenied)
	if s.WritesRefused > 0 {
		w += fmt.Sprintf("; %d write(s) refused", s.WritesRefused)
	}
	return w
}

// ViolationWords is the checker's violations, the count the header shows,
// and what they are.
func (s *Summary) ViolationWords() string {
	if s.Violations == 0 {
		return "0"
	}
	var p []string
	for _, kv := range []struct {
		n    int
		what string
	}{{s.Overlaps, "overlap entries"}, {s.StaleLanded, "stale writes landed"}, {s.Violations - s.Overlaps - s.StaleLanded - s.Duplicates, "sales beyond the stock"}, {s.Duplicates, "duplicates"}} {
		if kv.n > 0 {
			p = append(p, fmt.Sprintf("%s %s", thousands(kv.n), kv.what))
		}
	}
	return thousands(s.Violations) + " (" + strings.Join(p, ", ") + ")"
}

// NoLock reports whether the run's strategy takes no lock at all.
func (s *Summary) NoLock() bool { return !s.takesLock }

// takesLock reports whether h's run takes a lock that keeps the others out,
// by the traits of its locks: cron's and trade-offs' ways and the retry
// policies take one, none and optimistic concurrency do not.
func takesLock(h *event.Header) bool {
	run, keys := h.LockTraits()
	if run != nil && run.Excludes {
		return true
	}
	for _, t := range keys {
		if t.Excludes {
			return true
		}
	}
	return false
}
