package check

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/event"
)

// TallyFold makes a run's tally from its events, one at a time: the
// checker derives the violations again from the primary events (the
// derived events a log carries are only compared with them), the lost
// updates come from Updates, and every other count from the event that
// says so. Each change is also handed to a sink, so a history of the
// tally can be kept (Tallies).
type TallyFold struct {
	t        Tally
	rd       *Rederiver
	upd      Updates
	stockRes string
	onceRes  []string // the resources of once-only effects
	final    bool     // the run's final read of the stock is in
	ws       []workerState
	sink     func(tallyDelta)
	// The first refused and the first unanswered operation, in the
	// server's words.
	firstFailed, firstUnanswered string
	// The first operation a library gave up on, in its words.
	firstGaveUp string
	seq         int64
	// Unanswered renewals by the token they renewed: a later renewal or
	// release of that token that the server took proves the lock was
	// still that holder's, so they no longer leave anything unknown.
	// At most maxRenewing tokens are kept per worker; renewForgot: one
	// was let go, so a later renewal may settle what is no longer kept.
	moot        map[string]int64
	renewForgot bool
	sysRenewing []string // the renewing of events no worker's (the system's)
}

// maxRenewing is how many tokens with unanswered renewals the fold keeps
// per worker: a worker renews the locks it holds, a few at once.
const maxRenewing = 16

// noQuorum reports whether the worker's Redlock attempt fell short of its
// quorum through nodes that refused or did not answer: the nodes that said
// the lock was taken could not have denied it alone (had the others
// granted, there was a quorum).
func (w *workerState) noQuorum() bool {
	nodes := w.votesGranted + w.votesTaken + w.votesTrouble
	return w.votesTrouble > 0 && w.votesTaken <= nodes-(nodes/2+1)
}

// workerState is what the fold remembers of a worker between events.
type workerState struct {
	held         bool       // it has held a lock
	fenced       bool       // its last write was refused for a stale fence
	refused      bool       // a resource has refused its stale fence
	votesTaken   int        // in its current Redlock attempt: nodes that said "taken"
	votesTrouble int        // … nodes that failed or did not answer
	votesGranted int        // … nodes that granted it
	open         []openHold // its holds not ended yet (tallyholds.go)
	renewing     []string   // tokens it left renewals of unanswered, oldest first (some may be settled)
}

// NewTallyFold returns an empty fold.
func NewTallyFold() *TallyFold { return &TallyFold{rd: NewRederiver()} }

// Tally is the tally so far (shared: Clone it to keep it).
func (f *TallyFold) Tally() *Tally { return &f.t }

// Checker is the fold's checker.
func (f *TallyFold) Checker() *Checker { return f.rd.Checker }

// Mismatch says how the log's own derived events differ from the
// checker's ("" if they agree).
func (f *TallyFold) Mismatch() string { return f.rd.Mismatch() }

func (f *TallyFold) add(c Counter, n int64) {
	if n == 0 {
		return
	}
	d := tallyDelta{seq: f.seq, worker: -1, c: c, n: n}
	f.t.apply(d)
	if f.sink != nil {
		f.sink(d)
	}
}

func (f *TallyFold) addW(w int32, c WorkerCounter, n int64) {
	if w < 0 || w >= event.MaxWorkers || n == 0 {
		return
	}
	d := tallyDelta{seq: f.seq, worker: w, c: Counter(c), n: n}
	f.t.apply(d)
	if f.sink != nil {
		f.sink(d)
	}
}

func (f *TallyFold) worker(w int32) *workerState {
	if w < 0 || w >= event.MaxWorkers {
		return &workerState{}
	}
	for int(w) >= len(f.ws) {
		f.ws = append(f.ws, workerState{})
	}
	return &f.ws[w]
}

// Add folds the log's next event.
func (f *TallyFold) Add(e event.Event) {
	f.seq = int64(f.t.c[NEvents])
	f.add(NEvents, 1)
	if derived(e.Kind) {
		f.rd.Add(e, nil) // only compared: derived again below
		return
	}
	f.primary(&e)
	f.holds(&e)
	f.outcome(&e)
	f.lost(&e)
	c := f.rd.Checker
	before := [...]int{c.Overlaps, c.OverlapPairs, c.LostUpdates, c.Oversold, c.Duplicates, c.Deadlocks, c.IndeterminateWrites, c.Landed}
	f.rd.Add(e, nil)
	after := [...]int{c.Overlaps, c.OverlapPairs, c.LostUpdates, c.Oversold, c.Duplicates, c.Deadlocks, c.IndeterminateWrites, c.Landed}
	counters := [...]Counter{NOverlaps, NOverlapPairs, NStaleLanded, NOversold, NDuplicates, NDeadlocks, NUnansweredWrites, NLandedWrites}
	for i, cn := range counters {
		f.add(cn, int64(after[i]-before[i]))
	}
	f.flag(NLostUnknown, f.upd.Unknown())
	f.flag(NStaleUnknown, c.StaleUnknown())
	// A violation is the worker's whose entry, write or sale it was.
	v := (after[0] - before[0]) + (after[2] - before[2]) + (after[3] - before[3]) + (after[4] - before[4])
	f.add(NViolations, int64(v))
	f.addW(e.Worker, WViolations, int64(v))
	f.addW(e.Worker, WOverlaps, int64(after[0]-before[0]))
}

// lost brings the lost updates (by arithmetic) up to e.
func (f *TallyFold) lost(e *event.Event) {
	if e.Kind != event.KindRead && e.Kind != event.KindWrite && e.Kind != event.KindInit && e.Kind != event.KindError {
		return
	}
	// Only e's resource's chain changes: its change is the counts' (the
	// sums over every chain would cost a pass over the resources per event).
	lost0, most0 := chainLost(f.upd.res[e.Res])
	f.upd.Fold(e)
	lost1, most1 := chainLost(f.upd.res[e.Res])
	f.add(NLostUpdates, int64(lost1-lost0))
	f.add(NLostUpdatesMax, int64(most1-most0))
}

// chainLost is one chain's part of Lost and LostMax.
func chainLost(c *updChain) (lost, most int) {
	if c == nil {
		return 0, 0
	}
	n := c.count()
	return n, n + c.unanswered
}

// outcome counts an operation the server refused or did not answer,
// whatever kind of event answers it.
func (f *TallyFold) outcome(e *event.Event) {
	if e.Outcome == event.OutcomeOK {
		f.settle(e)
		return
	}
	op := e.Code
	switch e.Kind {
	case event.KindVote:
		op = "vote"
	case event.KindRenewFailed, event.KindRenewed:
		op = "renew"
	case event.KindRelease, event.KindReleaseFailed:
		op = "release"
	case event.KindAttempt, event.KindAcquired, event.KindDenied:
		op = "acquire"
	case event.KindRead:
		op = "read"
	case event.KindWrite:
		op = "write"
	}
	k := Counter(OpKind(op))
	node := e.Kind != event.KindError && e.Has&event.HasNode != 0 && e.Node >= 0
	switch e.Outcome {
	case event.OutcomeFailed:
		if f.firstFailed == "" && !node {
			f.firstFailed = e.Msg
		}
		f.add(failedOps+k, 1)
		f.addW(e.Worker, WFailed, 1)
		if node {
			f.add(NNodeFailed, 1)
		}
	case event.OutcomeIndeterminate:
		if f.firstUnanswered == "" {
			f.firstUnanswered = e.Msg
		}
		f.add(unknownOps+k, 1)
		f.addW(e.Worker, WUnanswered, 1)
		if e.Kind == event.KindRenewFailed && e.Token != "" {
			f.unsettled(e)
		}
	case event.OutcomeGaveUp:
		if f.firstGaveUp == "" {
			f.firstGaveUp = e.Msg
		}
		f.add(gaveUpOps+k, 1)
	}
}

// unsettled notes an unanswered renewal of e's token, keeping at most
// maxRenewing tokens of e's worker: the oldest is let go, its renewals
// counted unanswered for good.
func (f *TallyFold) unsettled(e *event.Event) {
	if f.moot == nil {
		f.moot = map[string]int64{}
	}
	if f.moot[e.Token] == 0 {
		list := &f.sysRenewing
		if e.Worker >= 0 && e.Worker < event.MaxWorkers {
			list = &f.worker(e.Worker).renewing
		}
		*list = slices.DeleteFunc(*list, func(t string) bool { return f.moot[t] == 0 })
		if len(*list) >= maxRenewing {
			delete(f.moot, (*list)[0])
			*list = slices.Delete(*list, 0, 1)
			f.renewForgot = true
		}
		*list = append(*list, e.Token)
	}
	f.moot[e.Token]++
}

// flag sets c to 1 once cond holds.
func (f *TallyFold) flag(c Counter, cond bool) {
	if cond && f.t.c[c] == 0 {
		f.add(c, 1)
	}
}

// settle takes back the unanswered renewals of e's token when e shows the
// server still kept that token's lock: a renewal it granted, or a release
// it took. (A lease or a PX key that lapsed cannot be renewed again.)
func (f *TallyFold) settle(e *event.Event) {
	if !(e.Kind == event.KindRenewed || (e.Kind == event.KindRelease && e.OK)) {
		return
	}
	n := f.moot[e.Token]
	if n == 0 {
		// Perhaps one let go: the count may be more than is unknown.
		f.flag(NRenewUnknown, f.renewForgot && e.Token != "")
		return
	}
	delete(f.moot, e.Token)
	f.add(unknownOps+Counter(OpKind("renew")), -n)
	f.addW(e.Worker, WUnanswered, -n)
}

// primary counts what the event itself says.
func (f *TallyFold) primary(e *event.Event) {
	w := f.worker(e.Worker)
	switch e.Kind {
	case event.KindInit:
		if e.Has&event.HasStock != 0 && f.stockRes == "" {
			f.stockRes = e.Res
			f.add(NHasStock, 1)
			f.add(NInitialStock, e.Stock)
			f.add(NCurrentStock, e.Stock)
		}
		if e.Code == LimitOnce && len(f.onceRes) < 8 && !slices.Contains(f.onceRes, e.Res) {
			f.onceRes = append(f.onceRes, e.Res)
		}
	case event.KindAttempt:
		f.add(NLockCalls, 1)
		w.votesTaken, w.votesTrouble, w.votesGranted = 0, 0, 0
	case event.KindVote:
		switch {
		case e.OK:
			w.votesGranted++
		case e.Outcome != event.OutcomeOK:
			w.votesTrouble++
		default:
			w.votesTaken++
		}
	case event.KindDenied:
		if strings.HasPrefix(e.Msg, "lock: not obtained") && w.noQuorum() {
			f.add(NDeniedNoQuorum, 1)
		} else {
			f.add(NDeniedBusy, 1)
		}
		f.addW(e.Worker, WDenied, 1)
	case event.KindAcquired:
		f.add(NAcquired, 1)
		f.addW(e.Worker, WAcquired, 1)
		w.held = true
	case event.KindWorkStart:
		f.addW(e.Worker, WEntries, 1)
	case event.KindBackoff:
		f.add(NRetries, 1)
		f.add(NRetryMicros, e.Delay.Microseconds())
		f.add(retryBins+Counter(RetryBinOf(e.Delay)), 1)
		f.addW(e.Worker, WRetries, 1)
	case event.KindFenceRejected:
		f.add(NStaleRefused, 1)
		w.fenced, w.refused = true, true
	case event.KindCrash:
		f.add(NCrashes, 1)
	case event.KindLockLost:
		f.add(NLocksLost, 1)
	case event.KindReleaseFailed:
		if !event.IsUndo(e) && e.Outcome != event.OutcomeGaveUp { // an undo's refusal refuses no holder; a call given up on was refused by none
			f.add(NReleaseRefused, 1)
		}
	case event.KindExpired:
		f.add(NExpired, 1)
	case event.KindRead:
		if e.Worker == event.System && e.Res == f.stockRes && e.Has&event.HasStock != 0 && f.stockRes != "" {
			f.final = true
			f.add(NCurrentStock, e.Stock-f.t.c[NCurrentStock])
		}
	case event.KindWrite:
		f.write(e, w)
	case event.KindDone:
		f.done(e, w)
	}
}

func (f *TallyFold) write(e *event.Event, w *workerState) {
	if e.Has&event.HasOK != 0 && !e.OK {
		if !w.fenced {
			f.add(NWritesRefused, 1)
		}
		w.fenced = false
		return
	}
	w.fenced = false
	if e.Worker != event.System && slices.Contains(f.onceRes, e.Res) {
		f.addW(e.Worker, WEffects, 1)
	}
	if e.Res != f.stockRes || f.stockRes == "" || e.Worker == event.System {
		return
	}
	f.add(NSold, 1)
	f.addW(e.Worker, WSold, 1)
	if e.Has&event.HasStock != 0 && !f.final {
		f.add(NCurrentStock, e.Stock-f.t.c[NCurrentStock])
	}
}

// done counts a worker's outcome once.
func (f *TallyFold) done(e *event.Event, w *workerState) {
	if e.Worker < 0 || e.Worker >= event.MaxWorkers || f.t.Worker(int(e.Worker), WDone) > 0 {
		return
	}
	f.add(NFinished, 1)
	f.addW(e.Worker, WDone, 1)
	if !e.OK && e.Code == FailLock && !w.held && !w.refused {
		f.add(NNeverGotLock, 1)
	}
	switch {
	case e.OK:
		f.add(NDoneOK, 1)
		f.addW(e.Worker, WDoneOK, 1)
	case e.Code == FailLock && w.refused:
		f.add(NDoneStale, 1)
	case e.Code == FailLock:
		f.add(NDoneLock, 1)
	case e.Code == FailStock:
		f.add(NDoneStock, 1)
	case e.Code == FailCancel:
		f.add(NDoneCancelled, 1)
	case e.Code == FailIndeterminate:
		f.add(NDoneUnanswered, 1)
	default:
		f.add(NDoneError, 1)
	}
}
