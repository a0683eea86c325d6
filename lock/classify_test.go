package lock_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// A command is indeterminate unless the server cannot have run it.
func TestClassifyKnowsWhatCannotHaveRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want lock.Outcome
	}{
		{"refused before a reply", &store.RefusedError{Reason: "ERR max number of clients reached", Err: syscall.EPIPE, Unserved: true}, lock.Failed},
		{"reset after replies", &store.RefusedError{Reason: "ERR max number of clients reached", Err: syscall.ECONNRESET}, lock.Indeterminate},
		{"broken pipe", syscall.EPIPE, lock.Indeterminate},
		{"deadline", context.DeadlineExceeded, lock.Indeterminate},
		{"wrapped refusal", errors.Join(errors.New("acquire"), &store.RefusedError{Reason: "DENIED", Err: syscall.ECONNRESET, Unserved: true}), lock.Failed},
	} {
		if got := lock.Classify(c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
