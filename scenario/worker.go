package scenario

import (
	"context"
	"encoding/binary"
	"errors"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
)

// holders maps lock tokens to the workers that hold them, so a worker that
// is denied can say whom it waits for.
type holders struct {
	mu sync.Mutex
	by map[string]int32
}

func (h *holders) set(token string, w int32) {
	h.mu.Lock()
	if h.by == nil {
		h.by = map[string]int32{}
	}
	h.by[token] = w
	h.mu.Unlock()
}

func (h *holders) get(token string) (int32, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.by[token]
	return w, ok
}

// HolderOf asks Redis who holds a lock key now: the worker, or −1.
func (e *Env) HolderOf(ctx context.Context, name string) int32 {
	w, _ := e.holder(ctx, name)
	return w
}

// holder asks Redis who holds a lock key now: the worker (−1 if none of
// this run's) and the key's token ("" if it is free).
func (e *Env) holder(ctx context.Context, name string) (int32, string) {
	tok, err := e.Store.Client().Get(ctx, e.Store.Key(name)).Result()
	if err != nil {
		return -1, ""
	}
	if w, ok := e.run.holders.get(tok); ok {
		return w, tok
	}
	return -1, tok
}

// waitOn is whom a worker denied a lock key waits on: the holder, and
// what tells one wait from the next — the holder, or in a guest's run a
// holder in another process by its token, which its host can name.
func (e *Env) waitOn(ctx context.Context, name string) (int32, string) {
	w, tok := e.holder(ctx, name)
	if w < 0 && e.guest && tok != "" {
		return w, "token " + tok
	}
	return w, itoa(int(w) + 1)
}

// NewLock gives w a lock of the named strategy (crash: the naive crash
// point), observed as w's events and paused with w.
func (e *Env) NewLock(w *Worker, strategy string, retry lock.Retry, crash func(string) bool) (lock.Locker, error) {
	return lock.NewOn(strategy, e.lockServersOf(w.ID), w.lockOptions(retry), crash)
}

// lockOptions are the options of w's locks: its clock, its events, its
// pauses, its random numbers.
func (w *Worker) lockOptions(retry lock.Retry) lock.Options {
	e := w.env
	o := lock.Options{Clock: e.Clock(), Observer: w.observe, Retry: retry, Rand: w.Rand, Hold: w.hold}
	if e.Clock().Simulated() {
		// A simulation's tokens come from its seed, as everything else
		// does: the same seed, the same log.
		var seed [32]byte
		for i := 0; i < len(seed); i += 8 {
			binary.LittleEndian.PutUint64(seed[i:], w.Rand.Uint64())
		}
		o.Tokens = mrand.NewChaCha8(seed)
	}
	return o
}

// Crash records that w dies here, holding whatever it holds.
func (w *Worker) Crash(msg string) {
	w.Emit(event.Event{Kind: event.KindCrash, Msg: msg})
}

// Pause stops w (and its lock's renewals) for d of virtual time, like a
// long garbage-collection pause. A pause injected from outside stops w
// wherever it is: at its next command to the store (one already sent
// completes, but w sees the reply only after the pause), at the end of its
// sleep, between its lock's retries — its renewal loop too, as a stopped
// process stops all its threads (see clock.Gate).
func (w *Worker) Pause(ctx context.Context, d time.Duration, why string) error {
	if !w.beginPause(d, why) {
		return nil
	}
	// The pause's own sleep does not wait for the pause to end.
	err := w.env.Clock().Sleep(clock.PastGate(ctx), d)
	w.endPause(d)
	return err
}

// PauseUntil is Pause for at least d and until until is closed or sent on
// (or ctx ends): a stop-the-world pause that outlasts what happens meanwhile
// however slow the machine is. The pause is recorded as however long it lasted.
func (w *Worker) PauseUntil(ctx context.Context, d time.Duration, until <-chan bool, why string) error {
	if !w.beginPause(d, why) {
		return nil
	}
	start := w.env.Clock().Now()
	err := w.env.Clock().Sleep(clock.PastGate(ctx), d)
	if err == nil {
		_, _, err = recv(ctx, until)
	}
	w.endPause(max(w.env.Clock().Now()-start, d))
	return err
}

// beginPause freezes w; false if it is paused already.
func (w *Worker) beginPause(d time.Duration, why string) bool {
	w.mu.Lock()
	if w.resumed != nil {
		w.mu.Unlock()
		return false
	}
	w.resumed = make(chan struct{})
	w.mu.Unlock()
	w.Emit(event.Event{Kind: event.KindPause, Msg: why, Delay: d, Has: event.HasDelay})
	return true
}

// endPause resumes w. The resume is recorded before anything held by the
// pause (the lock's renewals) may run again, so whatever they find comes
// after it in the log.
func (w *Worker) endPause(d time.Duration) {
	w.Emit(event.Event{Kind: event.KindResume})
	w.mu.Lock()
	close(w.resumed)
	w.resumed = nil
	w.paused += d
	w.lastResume = w.env.Clock().Now()
	w.mu.Unlock()
}

// pausedSince reports whether w has been paused since t: an answer it
// saw late because it was stopped is the pause's doing, not the machine's.
func (w *Worker) pausedSince(t time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resumed != nil || (w.paused > 0 && w.lastResume >= t)
}

// pausedSoFar is how long w has been paused in all.
func (w *Worker) pausedSoFar() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paused
}

// hold blocks while w is paused.
func (w *Worker) hold(ctx context.Context) error {
	w.mu.Lock()
	ch := w.resumed
	w.mu.Unlock()
	if ch == nil {
		return nil
	}
	_, err := await(ctx, ch)
	return err
}

// Wait records that w waits for the lock name held by peer (−1: nobody).
func (w *Worker) Wait(name string, peer int32) {
	e := event.Event{Kind: event.KindWait, Res: name}
	if peer >= 0 {
		e = e.WithPeer(peer)
	}
	w.Emit(e)
}

// waitFor records that w waits for name, held by peer, or when on names
// a token, by the holder of that token in another process.
func (w *Worker) waitFor(name string, peer int32, on string) {
	if tok, ok := strings.CutPrefix(on, "token "); ok && peer < 0 {
		w.Emit(event.Event{Kind: event.KindWait, Res: name, Token: tok})
		return
	}
	w.Wait(name, peer)
}

// Sleep waits d of virtual time of w's own: a pause that begins meanwhile
// stops the count until it ends, as it would stop the work.
func (w *Worker) Sleep(ctx context.Context, d time.Duration) error {
	c := w.env.Clock()
	end, p0 := c.Now()+d, w.pausedSoFar()
	for {
		if err := w.hold(ctx); err != nil {
			return err
		}
		left := end + w.pausedSoFar() - p0 - c.Now()
		if left <= 0 {
			if b, ok := w.env.run.lag.overran(w.ID, d, -left); ok {
				w.env.Emit(b)
			}
			return nil
		}
		if err := c.Sleep(ctx, left); err != nil {
			return err
		}
	}
}

// Now is the run's virtual time. Take it right before sending an
// operation and stamp the event of its answer WithCall: the log then holds
// when each operation was sent and when its answer came (invoke, return).
func (w *Worker) Now() time.Duration { return w.env.Clock().Now() }

// OpError records that operation op (read, write, …), sent at call, was
// answered by err instead: the server refused it (failed) or did not answer
// (indeterminate). ev carries what the operation meant to do (Res, a
// write's Stock). It returns the outcome.
func (w *Worker) OpError(op string, ev event.Event, call time.Duration, err error) event.Outcome {
	o := outcomeOf(err)
	ev.Kind, ev.Code, ev.Msg, ev.Outcome = event.KindError, op, serverMessage(err), o
	w.Emit(ev.WithCall(call))
	return o
}

// Fail ends w after err: interrupted if the run is stopping; denied (with
// denied as its words) only if the lock said it is held; otherwise the
// server failed it, and w says so in the server's own words.
func (w *Worker) Fail(ctx context.Context, err error, denied string) {
	switch {
	case ctx.Err() != nil:
		w.Done(false, check.FailCancel, "interrupted")
	case errors.Is(err, lock.ErrNotObtained):
		var qe *lock.QuorumError
		var lib interface{ QuorumWords() string } // a library's quorum (lock/libs)
		switch {
		case errors.As(err, &qe):
			denied = qe.Error()
		case errors.As(err, &lib):
			denied = lib.QuorumWords()
		}
		w.Done(false, check.FailLock, denied)
	case errors.Is(err, lock.ErrLockLost):
		// The lock's own lost-lock signal stopped it: the lock's story,
		// not a server's silence.
		w.Done(false, check.FailLock, "lock lost: its lost-lock signal stopped it")
	case outcomeOf(err) == event.OutcomeIndeterminate:
		w.Done(false, check.FailIndeterminate, serverMessage(err))
	default:
		w.Done(false, check.FailError, serverMessage(err))
	}
}

// outcomeOf classifies an operation's error.
func outcomeOf(err error) event.Outcome {
	switch lock.Classify(err) {
	case lock.Failed:
		return event.OutcomeFailed
	case lock.Indeterminate:
		return event.OutcomeIndeterminate
	}
	return event.OutcomeOK
}

// serverMessage is err in the server's words, without the lock's wrapping.
func serverMessage(err error) string {
	var oe *lock.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	if err == nil {
		return ""
	}
	return err.Error()
}
