package event

import "time"

// Kind is what an event records.
type Kind uint8

// The kinds of event. New kinds go at the end; readers skip kinds they do
// not know.
const (
	KindUnknown       Kind = iota
	KindInit               // a resource is set up (Res, Stock)
	KindAttempt            // a lock attempt (Res = lock key, Attempt, TTL)
	KindAcquired           // lock obtained (Token, Fence, TTL)
	KindDenied             // lock held by another
	KindBackoff            // waiting Delay before retrying
	KindRead               // read the protected resource (Stock)
	KindWrite              // wrote the protected resource (Stock, OK)
	KindWorkStart          // entered the critical section on Res
	KindWorkEnd            // left the critical section on Res
	KindRelease            // lock released (Code CodeUndo: a partial Redlock acquire undone on Node)
	KindReleaseFailed      // release refused: expired or not owner (Msg)
	KindExpired            // a lock's TTL lapsed while its holder still works
	KindRenewed            // watchdog renewal
	KindRenewFailed        // watchdog renewal failed (Msg)
	KindLockLost           // watchdog gave up: the holder must stop
	KindFenceOK            // the resource accepted a write with Fence
	KindFenceRejected      // the resource rejected a stale Fence
	KindCrash              // a worker died (Msg)
	KindPause              // stop-the-world pause of a worker starts
	KindResume             // … and ends
	KindWait               // Worker waits for Res held by Peer (wait-for edge)
	KindDeadlock           // a wait-for cycle closed (Msg lists it)
	KindNodeDown           // a Redis node stopped (Node)
	KindNodeUp             // … came back
	KindFailover           // a replica was promoted (Node)
	KindVote               // Redlock: one node's answer (Node, OK)
	KindViolation          // the checker found a safety violation (Code, Msg)
	KindBeat               // narration for talks (Msg)
	KindDone               // a worker's outcome (OK, Msg)
	KindError              // an operation answered with an error (Outcome, Code = the operation, Msg = the server's words)
	kindCount
)

var kindNames = [kindCount]string{
	KindUnknown: "unknown", KindInit: "init", KindAttempt: "attempt", KindAcquired: "acquired",
	KindDenied: "denied", KindBackoff: "backoff", KindRead: "read", KindWrite: "write",
	KindWorkStart: "work_start", KindWorkEnd: "work_end", KindRelease: "release",
	KindReleaseFailed: "release_failed", KindExpired: "expired", KindRenewed: "renewed",
	KindRenewFailed: "renew_failed", KindLockLost: "lock_lost", KindFenceOK: "fence_ok",
	KindFenceRejected: "fence_rejected", KindCrash: "crash", KindPause: "pause",
	KindResume: "resume", KindWait: "wait", KindDeadlock: "deadlock", KindNodeDown: "node_down",
	KindNodeUp: "node_up", KindFailover: "failover", KindVote: "vote", KindViolation: "violation",
	KindBeat: "beat", KindDone: "done", KindError: "error",
}

var kindByName = func() map[string]Kind {
	m := make(map[string]Kind, kindCount)
	for k, n := range kindNames {
		m[n] = Kind(k)
	}
	return m
}()

func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind returns the kind named s, or KindUnknown.
func ParseKind(s string) Kind { return kindByName[s] }

// Field flags say which optional fields an event carries.
type Field uint16

// The optional fields.
const (
	HasStock Field = 1 << iota
	HasFence
	HasNode
	HasOK
	HasTTL
	HasDelay
	HasPeer
	HasAttempt
	HasCall // Call is set: the event is the answer to an operation sent at Call
)

// Outcome is how an operation on a server ended.
type Outcome uint8

// The outcomes. The zero value is ok, so events that are not answers to
// operations need not say.
const (
	OutcomeOK            Outcome = iota // the server did it
	OutcomeFailed                       // the server said no (OOM, NOPERM, READONLY, …): it did not happen
	OutcomeIndeterminate                // timeout or lost connection: it may or may not have happened
	// OutcomeGaveUp: the client library gave up on a deadline of its own
	// before an answer came (before sending, or while waiting): whether
	// the command reached the server, and so whether it happened, is not
	// known. Unlike indeterminate, no server or link failed: the lock's
	// own code chose to stop waiting.
	OutcomeGaveUp
	outcomeCount
)

var outcomeNames = [outcomeCount]string{"ok", "failed", "indeterminate", "gave_up"}

// MayHaveHappened says the operation's effect is unknown: it may or may
// not have taken place.
func (o Outcome) MayHaveHappened() bool { return o == OutcomeIndeterminate || o == OutcomeGaveUp }

func (o Outcome) String() string {
	if o < outcomeCount {
		return outcomeNames[o]
	}
	return "unknown"
}

// ParseOutcome returns the outcome named s; false if s names none.
func ParseOutcome(s string) (Outcome, bool) {
	for i, n := range outcomeNames {
		if n == s {
			return Outcome(i), true
		}
	}
	return OutcomeOK, false
}

// System is the Worker of events that no worker emitted.
const System = -1

// Event is one step of a run. The log stamps Seq and T.
type Event struct {
	Seq     int64
	T       time.Duration // virtual time since the run started, µs precision: when the answer arrived
	Call    time.Duration // with HasCall: when the operation was sent (invoke; T is its return)
	Outcome Outcome       // of the operation this event answers
	Worker  int32         // worker index, or System
	Kind    Kind
	Has     Field
	OK      bool
	Node    int16
	Peer    int32 // the other worker: wait-for target, overlapping holder
	Attempt int32
	Fence   int64
	Stock   int64
	TTL     time.Duration
	Delay   time.Duration
	Res     string // resource or lock key, without the run's prefix
	Token   string
	Code    string // violation: overlap, oversold, lost_update, …
	Msg     string
}

// WithStock sets Stock.
func (e Event) WithStock(v int64) Event { e.Stock = v; e.Has |= HasStock; return e }

// WithOK sets OK.
func (e Event) WithOK(ok bool) Event { e.OK = ok; e.Has |= HasOK; return e }

// WithFence sets Fence.
func (e Event) WithFence(f int64) Event { e.Fence = f; e.Has |= HasFence; return e }

// WithPeer sets Peer.
func (e Event) WithPeer(p int32) Event { e.Peer = p; e.Has |= HasPeer; return e }

// WithCall sets Call, the time the operation this event answers was sent.
func (e Event) WithCall(t time.Duration) Event {
	e.Call = t.Truncate(time.Microsecond)
	e.Has |= HasCall
	return e
}

// Start is when the operation began: Call if stamped, else T.
func (e *Event) Start() time.Duration {
	if e.Has&HasCall != 0 {
		return e.Call
	}
	return e.T
}
