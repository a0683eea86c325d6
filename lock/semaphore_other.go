//go:build !linux

package lock

import (
	"context"
	"errors"
	"time"
)

// Semaphore needs Linux's System V semaphores; elsewhere every attempt
// fails with ErrNoSemaphore.
type Semaphore struct{}

// ErrNoSemaphore says this system offers no semaphore strategy.
var ErrNoSemaphore = errors.New("lock: the semaphore strategy needs Linux System V semaphores")

// NewSemaphore returns a strategy that always fails with ErrNoSemaphore.
func NewSemaphore(func() (string, error), func(func()), Options) *Semaphore { return &Semaphore{} }

// Strategy returns "semaphore".
func (*Semaphore) Strategy() string { return "semaphore" }

// TryAcquire fails with ErrNoSemaphore.
func (*Semaphore) TryAcquire(context.Context, string, time.Duration) (*Lease, error) {
	return nil, ErrNoSemaphore
}

// Acquire fails with ErrNoSemaphore.
func (*Semaphore) Acquire(context.Context, string, time.Duration) (*Lease, error) {
	return nil, ErrNoSemaphore
}
