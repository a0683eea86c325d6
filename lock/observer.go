package lock

import "time"

// StepKind names a step a lock takes.
type StepKind uint8

// The steps.
const (
	StepAttempt       StepKind = iota + 1 // an acquire attempt starts
	StepAcquired                          // the lock was obtained
	StepDenied                            // the lock is held by another
	StepBackoff                           // waiting Delay before the next attempt
	StepVote                              // Redlock: one node's answer (Node, OK)
	StepRenewed                           // watchdog: TTL extended
	StepRenewFailed                       // watchdog: a renewal did not extend the TTL
	StepLockLost                          // watchdog: the lock is gone; the holder's context is cancelled
	StepRelease                           // the lock was released
	StepReleaseFailed                     // release found the lock expired or foreign
	StepError                             // a command answered with an error, or not at all (Op, Outcome, Msg)
)

var stepNames = [...]string{
	StepAttempt: "attempt", StepAcquired: "acquired", StepDenied: "denied",
	StepBackoff: "backoff", StepVote: "vote", StepRenewed: "renewed",
	StepRenewFailed: "renew_failed", StepLockLost: "lock_lost",
	StepRelease: "release", StepReleaseFailed: "release_failed", StepError: "error",
}

func (k StepKind) String() string {
	if int(k) < len(stepNames) && stepNames[k] != "" {
		return stepNames[k]
	}
	return "unknown"
}

// Step is one thing a lock did.
type Step struct {
	Kind    StepKind
	Key     string
	Token   string
	Fence   int64
	TTL     time.Duration // asked TTL (attempt, acquired, renewed)
	Delay   time.Duration // backoff
	Node    int           // Redlock node index, -1 when not per-node
	OK      bool          // vote: granted; release: deleted
	Attempt int
	Msg     string // why, in words: "expired", "held by another owner", an error
	// Call is the clock's time when the command this step answers was
	// sent (zero for steps that answer none: attempt, backoff, lock_lost).
	Call time.Duration
	// Op names the operation of an error step: acquire, release, renew,
	// vote; and of a release step that undoes a partial acquire, OpUndo.
	Op string
	// Outcome of the command: OK unless the server failed it or did not answer.
	Outcome Outcome
}

// OpUndo is the Op of the release steps that undo a Redlock acquire that
// did not reach its quorum: each node that may have set the token is
// asked to delete it, as a release would.
const OpUndo = "undo"

// Observer sees each step. It is called on the lock's goroutine, and for
// watchdog renewals on the renewal goroutine; it must be cheap and must not
// block.
type Observer func(Step)
