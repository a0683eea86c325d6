package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/clock"
)

// Redlock acquires the same key with the same token on N independent nodes.
// It holds the lock when a quorum (⌊N/2⌋+1) granted it and the validity
// left — ttl − elapsed − drift, drift = ttl×0.01 + 2ms — is positive; a
// failed acquire is undone on every node, and release goes to every node.
type Redlock struct {
	base
	nodes  []Client
	fenced bool
}

// NewRedlock returns the Redlock strategy over nodes.
func NewRedlock(nodes []Client, o Options) *Redlock {
	return &Redlock{base: newBase(o), nodes: nodes}
}

// NewFencedRedlock returns Redlock with a fencing token issued by the
// majority that grants the lock. Each node takes the next value of its
// counter (key+":fence") in the same script as SET NX, only on success;
// the lease's fence is the highest value among the nodes that granted it,
// and those nodes' counters are raised to it. Any later majority shares a
// node with this one, so its fence is higher — as long as no node loses
// its counter (a restart without persistence, a failover to a replica
// that missed it): the counters are only as durable as the nodes.
func NewFencedRedlock(nodes []Client, o Options) *Redlock {
	return &Redlock{base: newBase(o), nodes: nodes, fenced: true}
}

// Strategy returns "redlock".
func (*Redlock) Strategy() string { return "redlock" }

// Quorum is how many nodes must grant the lock.
func (r *Redlock) Quorum() int { return len(r.nodes)/2 + 1 }

// NodeError is one node's failure to grant, renew or release.
type NodeError struct {
	Node int
	Err  error
}

func (e NodeError) Error() string { return fmt.Sprintf("node %d: %v", e.Node, e.Err) }
func (e NodeError) Unwrap() error { return e.Err }

// errTaken is a node's answer when another owner holds the key.
var errTaken = errors.New("taken")

// QuorumError says a Redlock acquire failed and why, node by node. It
// matches ErrNotObtained.
type QuorumError struct {
	Granted, Quorum int
	Validity        time.Duration
	Nodes           []NodeError
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lock: not obtained: %d of %d nodes granted (quorum %d)", e.Granted, e.Granted+len(e.Nodes), e.Quorum)
	if e.Granted >= e.Quorum {
		fmt.Fprintf(&b, ", but validity %v ran out", e.Validity)
	}
	// Nodes that did not answer, or refused with their own error, are not
	// a held lock: they are named, so no one reads the denial as contention.
	var taken, refused, unanswered int
	for _, n := range e.Nodes {
		switch {
		case errors.Is(n.Err, errTaken):
			taken++
		case classify(n.Err) == Indeterminate:
			unanswered++
		default:
			refused++
		}
	}
	if refused+unanswered > 0 {
		var p []string
		for _, c := range []struct {
			n    int
			what string
		}{{taken, "said taken"}, {unanswered, "did not answer"}, {refused, "failed"}} {
			if c.n > 0 {
				p = append(p, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		b.WriteString(": " + strings.Join(p, ", "))
	}
	return b.String()
}

// Is makes a QuorumError match ErrNotObtained: the algorithm said no —
// too few nodes granted in time, and whatever a node that timed out may
// have done was undone on every node. Only when no node granted and every
// node refused with a server's error (OOM, NOPERM, unreachable…) is it no
// contention, and it matches nothing.
func (e *QuorumError) Is(target error) bool {
	if target != ErrNotObtained {
		return false
	}
	if e.Granted > 0 {
		return true
	}
	for _, n := range e.Nodes {
		if errors.Is(n.Err, errTaken) || classify(n.Err) != Failed {
			return true
		}
	}
	return false
}

// serverError is the first node's own error, named: what failed the
// acquire when no node answered "taken".
func (e *QuorumError) serverError() error {
	for _, n := range e.Nodes {
		return n
	}
	return e
}

// Drift is the clock-drift allowance Redlock subtracts from a TTL.
func Drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// RedsyncDrift is the clock-drift allowance go-redsync's Mutex (the
// redsync strategies of lock/libs) subtracts from its expiry when it
// computes its validity: its drift factor, 0.01, with no fixed part.
func RedsyncDrift(expiry time.Duration) time.Duration { return time.Duration(float64(expiry) * 0.01) }

// TryAcquire makes one attempt on every node.
func (r *Redlock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return r.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (r *Redlock) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return r.acquire(ctx, key, ttl, r.try)
}

func (r *Redlock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	r.emit(Step{Kind: StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	start := r.clock.Now()
	// Each node gets a small share of the TTL to answer, so a dead or slow
	// node cannot eat the validity.
	timeout := min(max(r.clock.Real(ttl/10), 5*time.Millisecond), time.Second)
	fences := make([]int64, len(r.nodes))
	errs := r.each(ctx, timeout, max(ttl/10, 5*time.Millisecond), func(ctx context.Context, i int, c Client) error {
		call := r.clock.Now()
		err := r.vote(ctx, c, key, tok, ttl, &fences[i])
		step := Step{Kind: StepVote, Key: key, Token: tok, TTL: ttl, Node: i, OK: err == nil, Attempt: attempt, Call: call, Fence: fences[i]}
		if err != nil {
			step.Msg = err.Error()
			if err != errTaken {
				step.Op, step.Outcome = "vote", classify(err)
			}
		}
		r.emit(step)
		return err
	})
	granted := 0
	var failed []NodeError
	for i, e := range errs {
		if e == nil {
			granted++
		} else {
			failed = append(failed, NodeError{Node: i, Err: e})
		}
	}
	validity := ttl - (r.clock.Now() - start) - Drift(ttl)
	if granted >= r.Quorum() && validity > 0 {
		fence := r.raise(ctx, key, fences, errs)
		r.emit(Step{Kind: StepAcquired, Key: key, Token: tok, Fence: fence, TTL: validity, Attempt: attempt, Node: -1,
			Msg: fmt.Sprintf("%d/%d nodes", granted, len(r.nodes)), Call: start})
		l := newLease(ctx, key, tok, ttl, attempt)
		l.Validity, l.Fence = validity, fence
		l.release = func(ctx context.Context) error { return r.release(ctx, key, tok, "", nil) }
		return l, nil
	}
	// Undo the partial acquire: it was never held, but the nodes that
	// granted it keep the key until they are told. A node that answered
	// "taken" never set this token; every other one may have (an answer
	// lost on its way back still set the key), so it is asked. Each node's
	// answer is a step (Op OpUndo), so a view's nodes are freed when they
	// were.
	_ = r.release(context.WithoutCancel(ctx), key, tok, OpUndo, func(i int) bool { return errs[i] != errTaken })
	qe := &QuorumError{Granted: granted, Quorum: r.Quorum(), Validity: validity, Nodes: failed}
	if !qe.Is(ErrNotObtained) {
		// No node said "taken": every refusal was a server's failure.
		return nil, r.fail("acquire", key, attempt, -1, start, qe.serverError())
	}
	r.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: qe.Error(), Call: start})
	return nil, qe
}

// vote asks one node for the lock: nil when it granted it, errTaken when
// another owner holds it, else the node's error. A fenced vote also takes
// the node's next fence.
func (r *Redlock) vote(ctx context.Context, c Client, key, tok string, ttl time.Duration, fence *int64) error {
	if r.fenced {
		n, err := fencedScript.Run(ctx, c, []string{key, FenceKey(key)}, tok, r.ms(ttl)).Int64()
		switch {
		case err != nil:
			return err
		case n == 0:
			return errTaken
		}
		*fence = n
		return nil
	}
	cmd := redis.NewBoolCmd(ctx, "set", key, tok, "px", r.ms(ttl), "nx")
	err := c.Process(ctx, cmd)
	switch {
	case err != nil && err != redis.Nil:
		return err
	case cmd.Val():
		return nil
	}
	return errTaken
}

// raise returns the fence of a granted fenced acquire — the highest that
// a granting node counted — and raises the counters of the granting nodes
// that counted less to it (0 and nothing to do when not fenced). It is part
// of the acquire itself: not observed (the undoing of a partial one is).
func (r *Redlock) raise(ctx context.Context, key string, fences []int64, errs []error) int64 {
	var top int64
	lagging := false
	for i, f := range fences {
		if errs[i] == nil {
			lagging = lagging || (top != 0 && f != top)
			top = max(top, f)
		}
	}
	if !r.fenced || !lagging {
		return top
	}
	r.each(ctx, time.Second, time.Second, func(ctx context.Context, i int, c Client) error {
		if errs[i] != nil || fences[i] == top {
			return nil
		}
		return raiseScript.Run(ctx, c, []string{FenceKey(key)}, top).Err()
	})
	return top
}

// release runs compare-and-delete on every node that may hold tok (all
// when may is nil); op is OpUndo for the undoing of a partial acquire. It
// succeeds when a quorum of nodes still held the lock.
func (r *Redlock) release(ctx context.Context, key, tok, op string, may func(i int) bool) error {
	errs := r.each(ctx, time.Second, time.Second, func(ctx context.Context, i int, c Client) error {
		if may != nil && !may(i) {
			return ErrNotHeld
		}
		return compareAndDelete(ctx, &r.base, c, key, tok, i, op)
	})
	released := 0
	var failed []error
	for i, e := range errs {
		if e == nil {
			released++
		} else {
			failed = append(failed, NodeError{Node: i, Err: e})
		}
	}
	if released >= r.Quorum() {
		return nil
	}
	return errors.Join(append([]error{ErrNotHeld}, failed...)...)
}

// each runs f on every node in parallel, each bounded by timeout of real
// time (virtual in a simulation, where the host's time means nothing), and
// returns the errors in node order.
func (r *Redlock) each(ctx context.Context, timeout, virtual time.Duration, f func(ctx context.Context, i int, c Client) error) []error {
	errs := make([]error, len(r.nodes))
	g := clock.NewGroup(r.clock)
	for i, c := range r.nodes {
		g.Go(ctx, fmt.Sprintf("node %d", i), func(ctx context.Context) {
			nctx, cancel := context.WithTimeout(ctx, timeout)
			if r.clock.Simulated() {
				nctx, cancel = r.clock.WithTimeout(ctx, virtual)
			}
			defer cancel()
			errs[i] = f(nctx, i, c)
		})
	}
	g.Wait(ctx)
	return errs
}
