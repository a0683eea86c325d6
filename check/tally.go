package check

import (
	"strings"
	"time"
)

// Tally is what a run amounts to at one playhead: every count any view
// shows, made here and nowhere else. A TallyFold makes it from the events,
// one at a time, with the checker; Tallies keeps it seekable.
//
// Two definitions of a lost write are kept, and named the same on every
// surface: lost updates (by arithmetic — successful writes whose effect no
// chain of writes carries to the current value; for a stock counter,
// sold − (initial − final)) and stale writes landed (writes surely
// overtaken: computed from a read that another write, sent after that
// read's answer and answered before this write was sent, made stale — the
// checker's lost_update violations).
type Tally struct {
	c [numCounters]int64
	w [][numWorkerCounters]int64
}

// Counter names one of a tally's counts.
type Counter uint16

// The counts of a whole run.
const (
	NEvents           Counter = iota // events folded
	NSold                            // successful writes to the stock
	NHasStock                        // 1 once the stock is set up
	NInitialStock                    // the stock there was
	NCurrentStock                    // the stock now (the final read, once made)
	NOverlaps                        // entries into an occupied critical section
	NOverlapPairs                    // pairs of workers inside one together
	NLostUpdates                     // by arithmetic (see Tally)
	NLostUpdatesMax                  // … counting unanswered writes that may have landed
	NStaleLanded                     // writes surely overtaken (see Tally)
	NStaleRefused                    // stale writes the resource refused (fence)
	NWritesRefused                   // writes refused because the value changed since the read (optimistic)
	NOversold                        // units sold beyond the stock
	NDuplicates                      // once-only effects applied again
	NDeadlocks                       // wait-for cycles closed
	NViolations                      // the checker's violation events: overlaps + stale landed + oversold + duplicates
	NLockCalls                       // lock attempts
	NAcquired                        // locks granted
	NDeniedBusy                      // denials: the lock is held by another
	NDeniedNoQuorum                  // denials: short of a quorum through nodes that refused or did not answer, not through those that said it was held
	NRetries                         // backoffs before a retry
	NRetryMicros                     // their total delay, µs
	NFinished                        // workers with an outcome
	NDoneOK                          // … that succeeded
	NDoneLock                        // … that gave up on the lock, or lost it
	NDoneStale                       // … whose stale write the resource refused
	NDoneStock                       // … that found nothing left
	NDoneError                       // … that a server's error stopped
	NDoneUnanswered                  // … that an operation never answered stopped
	NDoneCancelled                   // … stopped by the run's end
	NNeverGotLock                    // finished workers that never held a lock
	NCrashes                         // workers that died
	NLocksLost                       // locks a watchdog gave up
	NReleaseRefused                  // releases refused (expired, or not the owner)
	NExpired                         // TTL lapses the log records
	NNodeFailed                      // one node's refusal among several (a vote, a release): the quorum decides
	NUnansweredWrites                // writes never answered
	NLandedWrites                    // … that the final read shows landed
	NHolds                           // holds of a lock that ended: acquired, then released, refused or lost
	NHoldMicros                      // their total length, µs
	NLapses                          // locks (or reservations) whose TTL lapsed while held (see tallyholds.go)
	NLostUnknown                     // 1 once the lost updates are unknown: more reads outstanding than the fold keeps
	NStaleUnknown                    // 1 once the stale writes landed are only a lower bound: the checker let go of what one needed
	NRenewUnknown                    // 1 once the unanswered renewals are only an upper bound: the fold let go of tokens a later renewal may have settled
	retryBins                        // RetryBinCount counts, one per delay bin
	holdBins          = retryBins + RetryBinCount
	failedOps         = holdBins + HoldBinCount
	unknownOps        = failedOps + Counter(len(OpKinds))
	gaveUpOps         = unknownOps + Counter(len(OpKinds))
	numCounters       = gaveUpOps + Counter(len(OpKinds))
)

// WorkerCounter names one of a worker's counts.
type WorkerCounter uint8

// The counts of one worker (a lane).
const (
	WAcquired   WorkerCounter = iota // locks it was granted
	WEntries                         // entries into a critical section
	WViolations                      // violations it caused: its entry, write or sale
	WDenied                          // lock attempts denied
	WRetries                         // backoffs
	WSold                            // successful writes to the stock
	WDone                            // 1 once it has an outcome
	WDoneOK                          // 1 if that outcome is success
	WFailed                          // operations the server refused
	WUnanswered                      // operations never answered
	WEffects                         // successful writes to a once-only effect (a credit, a charge)
	WOverlaps                        // its entries into an occupied critical section
	numWorkerCounters
)

// OpKinds are the kinds of operation whose outcome a tally counts.
var OpKinds = [numOpKinds]string{"acquire", "vote", "renew", "release", "read", "write", "other"}

const numOpKinds = 7

// OpKind is the index in OpKinds of an operation named op ("other" when
// it names none of them).
func OpKind(op string) int {
	for i, k := range OpKinds {
		if k == op {
			return i
		}
	}
	return len(OpKinds) - 1
}

// Get is count c.
func (t *Tally) Get(c Counter) int { return int(t.c[c]) }

// Failed is how many operations of kind op (an OpKinds index) the server
// refused; Unanswered how many it never answered.
func (t *Tally) Failed(op int) int     { return int(t.c[failedOps+Counter(op)]) }
func (t *Tally) Unanswered(op int) int { return int(t.c[unknownOps+Counter(op)]) }

// FailedOps is every operation the server refused, but one node's refusal
// among several, which the quorum decides.
func (t *Tally) FailedOps() int {
	n := 0
	for i := range OpKinds {
		n += t.Failed(i)
	}
	return n - t.Get(NNodeFailed)
}

// UnansweredOps is every operation never answered.
func (t *Tally) UnansweredOps() int {
	n := 0
	for i := range OpKinds {
		n += t.Unanswered(i)
	}
	return n
}

// GaveUp is how many operations of kind op (an OpKinds index) the lock's
// own library stopped waiting for on a deadline of its own: whether they
// happened is not known, but no server or link failed.
func (t *Tally) GaveUp(op int) int { return int(t.c[gaveUpOps+Counter(op)]) }

// GaveUpOps is every operation a library gave up on.
func (t *Tally) GaveUpOps() int {
	n := 0
	for i := range OpKinds {
		n += t.GaveUp(i)
	}
	return n
}

// GaveUpWords names the operations a library gave up on by kind: "1
// release(s), 2 renew(s)".
func (t *Tally) GaveUpWords() string {
	var p []string
	for i, k := range OpKinds {
		if n := t.GaveUp(i); n > 0 {
			p = append(p, itoaT(n)+" "+k+"(s)")
		}
	}
	return strings.Join(p, ", ")
}

// UnansweredWords names the unanswered operations by kind: "129 vote(s),
// 2 renew(s)".
func (t *Tally) UnansweredWords() string {
	var p []string
	for i, k := range OpKinds {
		if n := t.Unanswered(i); n > 0 {
			if k == "renew" && t.c[NRenewUnknown] > 0 {
				p = append(p, "at most "+itoaT(n)+" "+k+"(s)")
				continue
			}
			p = append(p, itoaT(n)+" "+k+"(s)")
		}
	}
	return strings.Join(p, ", ")
}

// RetryBin is count of backoffs in delay bin i (see RetryBinOf).
func (t *Tally) RetryBin(i int) int { return int(t.c[retryBins+Counter(i)]) }

// RetryMean is the mean backoff (0 without any).
func (t *Tally) RetryMean() time.Duration {
	if n := t.Get(NRetries); n > 0 {
		return time.Duration(t.c[NRetryMicros]/int64(n)) * time.Microsecond
	}
	return 0
}

// Denied is every denial, whatever its cause.
func (t *Tally) Denied() int { return t.Get(NDeniedBusy) + t.Get(NDeniedNoQuorum) }

// Expected is the stock the sales leave: initial − sold.
func (t *Tally) Expected() int64 { return t.c[NInitialStock] - t.c[NSold] }

// Workers is how many workers the tally has seen.
func (t *Tally) Workers() int { return len(t.w) }

// Worker is worker w's count c (0 for a worker not seen).
func (t *Tally) Worker(w int, c WorkerCounter) int {
	if w < 0 || w >= len(t.w) {
		return 0
	}
	return int(t.w[w][c])
}

// Participant sums count c over the lanes whose names (in lane order)
// belong to participant name (alice/2 → alice).
func (t *Tally) Participant(lanes []string, name string, c WorkerCounter) int {
	n := 0
	for i, l := range lanes {
		if AttendeeOf(l) == name {
			n += t.Worker(i, c)
		}
	}
	return n
}

// Clone is a copy that does not share t's storage.
func (t *Tally) Clone() Tally {
	return Tally{c: t.c, w: append([][numWorkerCounters]int64(nil), t.w...)}
}

func (t *Tally) apply(d tallyDelta) {
	if d.worker < 0 {
		t.c[d.c] += d.n
		return
	}
	for int(d.worker) >= len(t.w) {
		t.w = append(t.w, [numWorkerCounters]int64{})
	}
	t.w[d.worker][d.c] += d.n
}

// tallyDelta is one change of one count: a worker's when worker ≥ 0.
type tallyDelta struct {
	seq    int64
	worker int32
	c      Counter
	n      int64
}

func itoaT(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// The retry-delay bins: log-spaced, doubling from 100ms both ways (so a
// fixed delay is one bin, exponential backoff one bin per step), below
// the first edge, and at or above the last.
const (
	retryBinLow   = 100 * time.Millisecond >> 7
	RetryBinCount = 16
)

// RetryBinOf is the bin of a backoff of d.
func RetryBinOf(d time.Duration) int {
	i, edge := 0, retryBinLow
	for i < RetryBinCount-1 && d >= edge {
		i, edge = i+1, edge*2
	}
	return i
}

// RetryBinRange is bin i's delays: [lo, hi); hi 0 for the last, open bin.
func RetryBinRange(i int) (lo, hi time.Duration) {
	if i > 0 {
		lo = retryBinLow << (i - 1)
	}
	if i < RetryBinCount-1 {
		hi = retryBinLow << i
	}
	return lo, hi
}

// SavedByFencing reports overlaps that fencing has made harmless so far:
// two workers were inside at once, a stale write was refused, and nothing
// was lost, oversold or duplicated.
func (t *Tally) SavedByFencing() bool {
	return t.Get(NOverlaps) > 0 && t.Get(NStaleRefused) > 0 && t.Get(NLostUpdates) == 0 &&
		t.Get(NStaleLanded) == 0 && t.Get(NOversold) == 0 && t.Get(NDuplicates) == 0 &&
		(t.Get(NHasStock) == 0 || t.Expected() == t.c[NCurrentStock])
}

// AttendeeOf is the attendee part of a lane's name (alice/2 → alice).
func AttendeeOf(lane string) string {
	name, _, _ := strings.Cut(lane, "/")
	return name
}
