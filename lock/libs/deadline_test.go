package libs

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// A library's call that ends at a deadline of its own — its context's, or
// the connection's read deadline go-redis set from it — is one it gave
// up on; the client's own read timeout, a refusal, or the run's end is not.
func TestOwnDeadlineIsTheLibrarys(t *testing.T) {
	t.Parallel()
	live, done := context.Background(), func() context.Context {
		c, cancel := context.WithCancel(context.Background())
		cancel()
		return c
	}()
	ioTimeout := &os.PathError{Op: "read", Path: "tcp", Err: os.ErrDeadlineExceeded}
	for _, c := range []struct {
		name   string
		ctx    context.Context
		err    error
		waited time.Duration
		want   bool
	}{
		{"its context's deadline", live, context.DeadlineExceeded, time.Second, true},
		{"the read deadline set from it", live, ioTimeout, 50 * time.Millisecond, true},
		{"the client's own read timeout", live, ioTimeout, 3 * time.Second, false},
		{"a refusal", live, errors.New("ERR max number of clients reached"), time.Millisecond, false},
		{"the run's end", done, context.DeadlineExceeded, time.Second, false},
		{"no error", live, nil, time.Second, false},
	} {
		if got := ownDeadline(c.ctx, c.err, c.waited, 3*time.Second); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
