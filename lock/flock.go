package lock

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Flock locks a file per key with flock(2) in a directory of the run's own.
// It is a one-machine lock: the kernel of this machine is the only judge,
// so processes on other machines never see it. It has no TTL: the lock is
// freed when its holder closes the file, which a dying process does.
type Flock struct {
	base
	dir func() (string, error)
}

var _ Locker = (*Flock)(nil)

// NewFlock returns the flock strategy; dir gives the directory of the lock
// files.
func NewFlock(dir func() (string, error), o Options) *Flock {
	return &Flock{base: newBase(o), dir: dir}
}

// Strategy returns "flock".
func (*Flock) Strategy() string { return "flock" }

// TryAcquire makes one attempt.
func (f *Flock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return f.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (f *Flock) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return f.acquire(ctx, key, ttl, f.try)
}

// lockFile is the file of key in dir (a key may hold any byte but '/').
func lockFile(dir func() (string, error), key, ext string) (string, error) {
	if dir == nil {
		return "", errors.New("lock: no directory for lock files")
	}
	d, err := dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, url.PathEscape(key)+ext), nil
}

func (f *Flock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	path, err := lockFile(f.dir, key, ".lock")
	if err != nil {
		return nil, err
	}
	// No TTL and no token: the open file is the lock, and its holder's
	// process the only one that can let it go.
	call := f.clock.Now()
	f.emit(Step{Kind: StepAttempt, Key: key, Attempt: attempt, Node: -1})
	// Each attempt opens the file anew: flock belongs to an open file, so
	// two opens in one process exclude each other as two processes do.
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		fh.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			f.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
			return nil, ErrNotObtained
		}
		return nil, err
	}
	f.emit(Step{Kind: StepAcquired, Key: key, Attempt: attempt, Node: -1, Call: call})
	l := newLease(ctx, key, "", ttl, attempt)
	l.release = func(context.Context) error {
		call := f.clock.Now()
		err := errors.Join(unix.Flock(int(fh.Fd()), unix.LOCK_UN), fh.Close())
		if err != nil {
			f.emit(Step{Kind: StepReleaseFailed, Key: key, Node: -1, Msg: err.Error(), Call: call})
			return err
		}
		f.emit(Step{Kind: StepRelease, Key: key, Node: -1, OK: true, Call: call})
		return nil
	}
	// A process that dies closes its files: the lock is free at once.
	l.abandon = func() { fh.Close() }
	return l, nil
}
