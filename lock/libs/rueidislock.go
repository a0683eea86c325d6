package libs

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/locklab/locklab/lock"
)

// rueidisLock is rueidis's lock, github.com/redis/rueidis/rueidislock,
// unmodified. The library holds a lock by a key of its own (prefix:0:name)
// whose value is a random token and whose expiry is an absolute deadline
// read from this process's wall clock (SET NX PXAT); a goroutine of the
// library extends it to now+validity every half validity (PEXPIREAT),
// and when an extension finds the key gone or another's it cancels the
// lock's context: that is its lost-lock signal. Release is the same
// context's cancel, which deletes the key if it still holds the token.
//
// The library takes its options per Locker, not per call, so there is one
// of its Lockers per key and TTL: KeyValidity is the TTL asked, in real
// time at the run's speed when the locker is made (its timers are real),
// KeyMajority 1 (its default, 2 of 3 keys, spreads a lock over a
// cluster's shards; on one server the keys live and die together), and
// TryNextAfter a second (its default, 20ms, is the acquire
// command's own deadline, shorter than a busy machine's scheduler).
type rueidisLock struct {
	kit  *lock.Kit
	base rueidis.ClientOption

	mu      sync.Mutex
	lockers map[lockerKey]*rueidisLocker
}

type lockerKey struct {
	key string
	ttl time.Duration
}

// rueidisLocker is one of the library's Lockers and the client it talks
// through.
type rueidisLocker struct {
	l rueidislock.Locker
	c *seenClient
}

const rueidisName = "rueidislock"

func newRueidis(s lock.Servers, o lock.Options) (lock.Locker, error) {
	c, err := clientOf(s, 0)
	if err != nil {
		return nil, err
	}
	base := rueidisOptions(c.Options())
	base.DisableCache = !noLoop(c)
	r := &rueidisLock{kit: lock.NewKit(o), base: base, lockers: map[lockerKey]*rueidisLocker{}}
	if s.Cleanup != nil {
		s.Cleanup(r.close) // the library's clients and their connections end with the run
	}
	return r, nil
}

// close closes the library's Lockers, and so their clients.
func (r *rueidisLock) close() {
	r.mu.Lock()
	ls := r.lockers
	r.lockers = map[lockerKey]*rueidisLocker{}
	r.mu.Unlock()
	for _, l := range ls {
		l.l.Close()
	}
}

// noLoop reports whether the server keeps CLIENT TRACKING's NOLOOP for
// scripts' writes (Redis 7.0.5 and later). Without it, each of the
// library's extensions tells the library its own key changed, and it
// extends again: thousands a second. So the library is given client-side
// caching with NoLoopTracking where the server has it, and DisableCache
// elsewhere (the embedded store has no CLIENT TRACKING at all).
func noLoop(c *redis.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !ok {
			continue
		}
		var major, minor, patch int
		if n, _ := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); n < 3 {
			return false
		}
		return major > 7 || major == 7 && (minor > 0 || patch >= 5)
	}
	return false
}

// rueidisOptions are a rueidis client's options for the node go-redis's
// client talks to, through the same dialer (a worker's faulty links, an
// embedded node wherever it listens now).
func rueidisOptions(o *redis.Options) rueidis.ClientOption {
	dial := o.Dialer
	if dial == nil {
		dial = redis.NewDialer(o)
	}
	return rueidis.ClientOption{
		InitAddress: []string{o.Addr}, Username: o.Username, Password: o.Password, SelectDB: o.DB,
		TLSConfig: o.TLSConfig, DisableRetry: true, ForceSingleClient: true,
		DialCtxFn: func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		},
	}
}

func (*rueidisLock) Strategy() string { return rueidisName }

// locker is the library's Locker for key and ttl, made on first use.
// Client-side caching (the library's default, which tells a waiter the
// moment a lock is freed and a holder the moment its key changes) is used
// where the server offers it with NOLOOP (see noLoop); elsewhere the
// library runs with DisableCache, as its docs say to, and a holder learns
// of a loss at its next extension.
func (r *rueidisLock) locker(key string, ttl time.Duration) (*rueidisLocker, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := lockerKey{key, ttl}
	if l, ok := r.lockers[k]; ok {
		return l, nil
	}
	var seen *seenClient
	opt := rueidislock.LockerOption{
		ClientOption: r.base, KeyPrefix: key, KeyValidity: r.kit.Real(ttl), KeyMajority: 1, NoLoopTracking: true,
		TryNextAfter: time.Second,
		ClientBuilder: func(o rueidis.ClientOption) (rueidis.Client, error) {
			c, err := rueidis.NewClient(o)
			if err != nil {
				return nil, err
			}
			seen = newSeenClient(c, r.kit, key, ttl)
			return seen, nil
		},
	}
	l, err := rueidislock.NewLocker(opt)
	if err != nil && errors.Is(err, rueidis.ErrNoCache) {
		opt.ClientOption.DisableCache = true
		l, err = rueidislock.NewLocker(opt)
	}
	if err != nil {
		return nil, fmt.Errorf("lock/libs: rueidislock: %w", err)
	}
	seen.cache = !opt.ClientOption.DisableCache
	rl := &rueidisLocker{l: l, c: seen}
	r.lockers[k] = rl
	return rl, nil
}

func (r *rueidisLock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.try(ctx, key, ttl, 1)
}

func (r *rueidisLock) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.kit.Acquire(ctx, key, ttl, r.try)
}

func (r *rueidisLock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	// A paused worker stops at its command's gate (clock.WithGate), not
	// here: Options.Hold is for renewals, and may hold for good.
	rl, err := r.locker(key, ttl)
	if err != nil {
		return nil, err
	}
	r.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	wctx, w := watchCall(ctx)
	call := r.kit.Now()
	// One try: the scenario's retry policy spaces the attempts.
	lctx, cancel, err := rl.l.TryWithContext(wctx, rueidisName)
	switch {
	case errors.Is(err, rueidislock.ErrNotLocked) && w.set():
		// Its SET answered OK after the lock's validity, on the library's
		// wall clock, had run out: the library counts no lock, takes the
		// key back (a delete bounded by a deadline already past) or lets
		// it lapse. Not a denial: nobody held it. The scenario's retry
		// policy spaces the next try, as after a denial.
		tok, left := w.token()
		r.kit.Emit(lock.Step{Kind: lock.StepError, Op: "acquire", Outcome: lock.GaveUp, Key: key, Token: tok, TTL: left, Attempt: attempt, Node: -1, Call: call,
			Msg: "rueidislock gave up on its own deadline: its SET answered OK after the lock's validity had run out, so it counts no lock and the key lapses; " + w.String()})
		return nil, lock.ErrNotObtained
	case errors.Is(err, rueidislock.ErrNotLocked):
		r.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held; " + w.String(), Call: call})
		return nil, lock.ErrNotObtained
	case err != nil:
		return nil, err
	}
	// The step's TTL is what the key's deadline leaves from the answer:
	// the library read it before sending (see seenClient.left).
	tok, left := w.token()
	msg := fmt.Sprintf("valid %s, extended every %s; %s", ttl, ttl/2, w.String())
	r.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, TTL: left, Attempt: attempt, Node: -1, Msg: msg, Call: call})
	h := &rueidisHeld{r: r, c: rl.c, key: key, tok: tok, lctx: lctx, cancel: cancel}
	l := lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{Release: h.release, Abandon: h.abandon, Losable: true})
	h.lease = l
	rl.c.hold(tok)
	go h.watch()
	return l, nil
}

// rueidisHeld is one held lock of the library: its context, cancelled by
// the library when the lock is lost, and its cancel, the release.
type rueidisHeld struct {
	r      *rueidisLock
	c      *seenClient
	key    string
	tok    string
	lease  *lock.Lease
	lctx   context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	ours bool // the holder released or abandoned it: the context's end is not a loss
	lost sync.Once
}

// watch tells the library's lost-lock signal: the lock's context cancelled
// while the holder still holds it.
func (h *rueidisHeld) watch() {
	<-h.lctx.Done()
	h.mu.Lock()
	ours := h.ours
	h.mu.Unlock()
	if !ours {
		h.lose()
	}
}

func (h *rueidisHeld) lose() {
	h.lost.Do(func() { h.r.kit.Lose(h.lease, "rueidislock cancelled the lock's context: "+h.c.lastRenewal(h.tok)) })
}

// end marks the lock's context's end as the holder's doing, and reports
// whether the library had ended it first.
func (h *rueidisHeld) end() (lostFirst bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ours = true
	return h.lctx.Err() != nil
}

func (h *rueidisHeld) release(context.Context) error {
	if h.end() {
		h.lose() // the signal came before the release, whoever saw it first
	}
	call := h.r.kit.Now()
	h.cancel() // the library deletes the key if it still holds the token, and waits for it
	d := h.c.released(h.tok)
	switch {
	case !d.sent:
		h.r.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: h.key, Token: h.tok, Node: -1, Call: call,
			Msg: "not held: the library had found it lost and sent nothing"})
		return lock.ErrNotHeld
	case d.err != nil:
		// The library bounds its delete by the lock's deadline, read from
		// its wall clock: past it, it stops waiting, whether or not the
		// delete went out, and what Redis did is not known.
		o, msg := gaveUp(d.err, d.early, "deleted", "the library's delete did not complete: ")
		h.r.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: h.key, Token: h.tok, Node: -1, Call: call,
			Op: "release", Outcome: o, Msg: msg})
		return lock.ErrNotHeld // the holder's view: its library holds it no more; the step says what Redis may have done
	case d.n != 1:
		h.r.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: h.key, Token: h.tok, Node: -1, Call: call,
			Msg: "not held (expired or another owner's); sent EVALSHA→0"})
		return lock.ErrNotHeld
	}
	h.r.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: h.key, Token: h.tok, Node: -1, OK: true, Call: call, Msg: "sent EVALSHA→1"})
	return nil
}

// abandon is the holder's process dying: nothing more of its reaches the
// server (no extension, no delete), and the key lapses at its deadline.
func (h *rueidisHeld) abandon() {
	h.end()
	h.c.kill(h.tok)
	h.cancel()
}

// The library's scripts, by their SHA-1 (pinned: rueidis v1.0.79).
var rueidisScripts = map[string]string{
	sha(`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`):                                             "acquire",
	sha(`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PX",ARGV[2]);redis.call("GET",KEYS[1]);return r`):                                               "acquire-px",
	sha(`if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`): "extend",
	sha(`if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0`):                                                     "delete",
}

func sha(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// gaveUp is the outcome of a library call that ended with err, and its
// words: a call the library stopped waiting for on its own deadline is
// GaveUp, said with what the protocol showed of it (early: its deadline
// had passed before the call, so nothing went out; else it may have gone
// out, and whether Redis did what (did: deleted, extended) is not known).
// Any other error is told as the library's answer, as it always was.
func gaveUp(err error, early bool, did, other string) (lock.Outcome, string) {
	switch {
	case !errors.Is(err, context.DeadlineExceeded):
		return lock.OK, other + err.Error()
	case early:
		return lock.GaveUp, "rueidislock gave up on its own deadline before sending: Redis never saw it, so it neither " + did + " the key nor said whose it was (" + err.Error() + ")"
	}
	return lock.GaveUp, "rueidislock gave up on its own deadline; whether Redis " + did + " the key is not known (" + err.Error() + ")"
}
