package lock

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Semaphore is a System V semaphore per key, used as a lock: one atomic
// semop waits for zero and adds one (IPC_NOWAIT: a taken lock is denied at
// once), release subtracts one. It is a one-machine lock, kept by this
// machine's kernel. SEM_UNDO gives the count back when the holder's process
// exits; a holder that dies inside a process that lives on keeps it.
//
// golang.org/x/sys/unix offers System V shared memory but no semaphore
// calls, so semget, semtimedop and semctl are made by number through
// unix.Syscall6. POSIX named semaphores (sem_open) are a C library
// construct over shared memory, out of reach without cgo.
type Semaphore struct {
	base
	dir     func() (string, error)
	cleanup func(func())
}

var _ Locker = (*Semaphore)(nil)

// NewSemaphore returns the semaphore strategy. dir gives the run's
// directory, which scopes the semaphores to the run; cleanup, if set, is
// given a function that removes each semaphore at the end of the run.
func NewSemaphore(dir func() (string, error), cleanup func(func()), o Options) *Semaphore {
	return &Semaphore{base: newBase(o), dir: dir, cleanup: cleanup}
}

// Strategy returns "semaphore".
func (*Semaphore) Strategy() string { return "semaphore" }

// TryAcquire makes one attempt.
func (s *Semaphore) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return s.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (s *Semaphore) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return s.acquire(ctx, key, ttl, s.try)
}

// Values of <sys/sem.h> that x/sys/unix does not define.
const semUndo = 0x1000

type sembuf struct {
	num uint16
	op  int16
	flg int16
}

// semIDs are the semaphore sets made in this process, by run directory and
// key, so the workers of a run share one per key.
var semIDs = struct {
	sync.Mutex
	by map[string]int
}{by: map[string]int{}}

// semFor returns the semaphore set of key, making it on first use.
func (s *Semaphore) semFor(key string) (int, error) {
	path, err := lockFile(s.dir, key, ".sem")
	if err != nil {
		return 0, err
	}
	semIDs.Lock()
	defer semIDs.Unlock()
	if id, ok := semIDs.by[path]; ok {
		return id, nil
	}
	// A private set: two runs never share one, whatever their keys. Another
	// process on this machine could use it by its id.
	id, _, errno := unix.Syscall(unix.SYS_SEMGET, unix.IPC_PRIVATE, 1, uintptr(unix.IPC_CREAT|0o600))
	if errno != 0 {
		return 0, os.NewSyscallError("semget", errno)
	}
	semIDs.by[path] = int(id)
	if s.cleanup != nil {
		s.cleanup(func() {
			unix.Syscall6(unix.SYS_SEMCTL, id, 0, unix.IPC_RMID, 0, 0, 0)
			semIDs.Lock()
			delete(semIDs.by, path)
			semIDs.Unlock()
		})
	}
	return int(id), nil
}

func semop(id int, ops []sembuf) error {
	_, _, errno := unix.Syscall6(unix.SYS_SEMTIMEDOP, uintptr(id), uintptr(unsafe.Pointer(&ops[0])), uintptr(len(ops)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func (s *Semaphore) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	id, err := s.semFor(key)
	if err != nil {
		return nil, err
	}
	// No TTL and no token: the count is the lock, given back by the
	// holder or by the kernel when the holder's process exits.
	call := s.clock.Now()
	s.emit(Step{Kind: StepAttempt, Key: key, Attempt: attempt, Node: -1})
	// Wait for zero and take it to one, as one atomic operation.
	err = semop(id, []sembuf{{0, 0, unix.IPC_NOWAIT}, {0, 1, unix.IPC_NOWAIT | semUndo}})
	if errors.Is(err, unix.EAGAIN) {
		s.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, ErrNotObtained
	}
	if err != nil {
		return nil, os.NewSyscallError("semop", err)
	}
	s.emit(Step{Kind: StepAcquired, Key: key, Attempt: attempt, Node: -1, Call: call})
	l := newLease(ctx, key, "", ttl, attempt)
	l.release = func(context.Context) error {
		call := s.clock.Now()
		if err := semop(id, []sembuf{{0, -1, unix.IPC_NOWAIT | semUndo}}); err != nil {
			err = os.NewSyscallError("semop", err)
			s.emit(Step{Kind: StepReleaseFailed, Key: key, Node: -1, Msg: err.Error(), Call: call})
			return err
		}
		s.emit(Step{Kind: StepRelease, Key: key, Node: -1, OK: true, Call: call})
		return nil
	}
	return l, nil
}
