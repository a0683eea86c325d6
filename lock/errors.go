package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Outcome is how one operation on a server ended.
type Outcome uint8

// The outcomes of an operation.
const (
	// OK: the server answered; the answer may still be "no" (a lock held
	// by another owner is an answer, not an error).
	OK Outcome = iota
	// Failed: the server refused the command (OOM, NOPERM, READONLY, max
	// number of clients, …) or it was never sent: it did not happen.
	Failed
	// Indeterminate: the command was sent and no answer came (timeout,
	// connection lost): it may or may not have happened.
	Indeterminate
	// GaveUp: the client library stopped waiting on a deadline of its own
	// (a library lock's deadline, read from its wall clock) before an
	// answer came, sent or not: whether it happened is not known, and no
	// server or link is to blame.
	GaveUp
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Indeterminate:
		return "indeterminate"
	case GaveUp:
		return "gave up"
	}
	return "unknown"
}

// Classify says how an operation that returned err ended. ErrNotObtained
// and ErrNotHeld are answers (OK); an error reply from the server is
// Failed; a command that may have reached the server unanswered is
// Indeterminate.
func Classify(err error) Outcome {
	var oe *OpError
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, ErrNotObtained), errors.Is(err, ErrNotHeld):
		return OK
	case errors.As(err, &oe):
		return oe.Outcome
	}
	return classify(err)
}

func classify(err error) Outcome {
	var re redis.Error
	var ne *net.OpError
	var never interface{ NeverRan() bool }
	switch {
	case errors.As(err, &never) && never.NeverRan():
		return Failed // the server hung up on a new connection before reading from it
	case errors.As(err, &re) && !errors.Is(err, redis.ErrClosed) && !errors.Is(err, redis.ErrPoolTimeout):
		return Failed // the server's own error reply
	case errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return Failed // never sent
	case errors.As(err, &ne) && ne.Op == "dial", errors.Is(err, syscall.ECONNREFUSED):
		return Failed // no connection: never sent
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return Indeterminate
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return Indeterminate
	}
	return Indeterminate // whatever else went wrong on the way, the command may have landed
}

// OpError is a lock operation the server did not answer with a lock's
// answer: an error reply, a timeout, a lost connection. It never matches
// ErrNotObtained: a server error is not contention.
type OpError struct {
	Op      string // "acquire", "release", "renew"
	Key     string
	Outcome Outcome
	Err     error
}

func (e *OpError) Error() string {
	if e.Outcome == Indeterminate {
		return fmt.Sprintf("lock: %s %s: no answer (it may have happened): %v", e.Op, e.Key, e.Err)
	}
	return fmt.Sprintf("lock: %s %s: %v", e.Op, e.Key, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// opError wraps err, which a command of op on key returned.
func opError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var oe *OpError
	if errors.As(err, &oe) || errors.Is(err, ErrNotObtained) || errors.Is(err, ErrNotHeld) || errors.Is(err, ErrCrashed) {
		return err
	}
	return &OpError{Op: op, Key: key, Outcome: classify(err), Err: err}
}
