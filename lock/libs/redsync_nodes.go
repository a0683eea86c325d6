package libs

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// redsync's Mutex on several nodes sends each node its own commands from a
// goroutine of its own: SET NX PX to acquire, its delete script to release
// and, when an acquire falls short of the quorum, to undo the votes it
// got. Each node's pool is the library's goredis pool, its connections'
// commands carrying the node's index in their context; the protocol hook
// then tells each node's answer as that node's step — a vote, a release,
// an undo — as locklab's own Redlock does. The library's outcome (quorum
// or not, validity left or not) stays the attempt's.

// nodeKey carries, in a command's context, the node redsync sent it to.
type nodeKey struct{}

// nodePool is redsync's goredis pool of node i, unmodified: Get only puts
// the node's index in the context its connection's commands are sent with.
type nodePool struct {
	redsyncredis.Pool
	node int
}

func (p nodePool) Get(ctx context.Context) (redsyncredis.Conn, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return p.Pool.Get(context.WithValue(ctx, nodeKey{}, p.node))
}

// deleteSHA is the SHA-1 of redsync's delete script (v4.18.1's
// scripts.go): compare-and-DEL, -1 when the key is gone.
const deleteSHA = "e950836ed1e694540c503ef9972b8de518044d3b"

// nodeSteps turns one Mutex call's commands into per-node steps: while
// acquiring, each SET NX is a vote and each delete an undo of one; while
// releasing, each delete is that node's release.
type nodeSteps struct {
	kit       *lock.Kit
	outer     context.Context // the caller's: done, the run ended the call
	key       string
	ttl       time.Duration
	attempt   int
	acquiring bool
	// readTimeout is the nodes' clients' own (0: none): an i/o timeout
	// sooner is the library's deadline, not the client's.
	readTimeout time.Duration

	mu                        sync.Mutex
	granted, taken, unsure, n int // votes: granted, "taken", not answered, all
}

// sent sees one command node sent and its answer (err: what it
// returned; go-redis sets it on cmd only after the hooks); call is when
// it went, waited how long it took on the wall clock.
func (s *nodeSteps) sent(node int, cmd redis.Cmder, err error, call, waited time.Duration) {
	if err != nil && ownDeadline(s.outer, err, waited, s.readTimeout) {
		// Mutex.Lock waits for each node 5% of the expiry on its wall
		// clock, then counts it as not granted: it may have set the key.
		err = nodeGaveUp{fmt.Errorf("redsync gave up on the node after 5%% of the expiry (%s); whether it set the key is not known: %w",
			wallWords(s.kit, s.kit.ToServer(s.ttl)/20), err)}
	}
	args := cmd.Args()
	switch name := strings.ToLower(cmd.Name()); {
	case name == "set" && s.acquiring:
		s.vote(node, cmd, err, argAt(args, 2), call)
		return
	case name == "evalsha" && argAt(args, 1) == deleteSHA, name == "eval" && sha1Of(argAt(args, 1)) == deleteSHA:
		if name == "evalsha" && err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			return // the library sends the script itself next
		}
		s.deleted(node, cmd, err, argAt(args, 4), call)
	}
}

// vote tells node's answer to the SET NX.
func (s *nodeSteps) vote(node int, cmd redis.Cmder, err error, tok string, call time.Duration) {
	st := lock.Step{Kind: lock.StepVote, Key: s.key, Token: tok, TTL: s.ttl, Node: node, Attempt: s.attempt, Call: call}
	set, _ := cmd.(*redis.BoolCmd)
	s.mu.Lock()
	s.n++
	switch {
	case err == nil && set != nil && set.Val():
		st.OK = true
		s.granted++
	case err == nil || errors.Is(err, redis.Nil):
		st.Msg = "taken"
		s.taken++
	default:
		st.Msg, st.Op, st.Outcome = oneLine(err.Error()), "vote", outcome(err)
		if st.Outcome != lock.Failed {
			s.unsure++
		}
	}
	s.mu.Unlock()
	s.kit.Emit(st)
}

// deleted tells node's answer to the delete script: 1 deleted, 0 another
// owner's key, -1 no key.
func (s *nodeSteps) deleted(node int, cmd redis.Cmder, err error, tok string, call time.Duration) {
	op := ""
	if s.acquiring {
		op = lock.OpUndo
	}
	st := lock.Step{Kind: lock.StepReleaseFailed, Key: s.key, Token: tok, Node: node, Call: call, Op: op}
	n := int64(0)
	if c, ok := cmd.(*redis.Cmd); ok && err == nil {
		n, err = c.Int64()
	}
	switch {
	case err != nil:
		st.Msg, st.Outcome = oneLine(err.Error()), outcome(err)
		if op == "" {
			st.Op = "release"
		}
	case n == 1:
		st.Kind, st.OK = lock.StepRelease, true
	case n == 0:
		st.Msg = "held by another owner"
	default:
		st.Msg = "expired"
	}
	s.kit.Emit(st)
}

// nodeGaveUp is a node's answer the library stopped waiting for.
type nodeGaveUp struct{ error }

func (e nodeGaveUp) Unwrap() error { return e.error }

// outcome is how a node's command ended: given up on by the library, or
// as lock.Classify says.
func outcome(err error) lock.Outcome {
	var g nodeGaveUp
	if errors.As(err, &g) {
		return lock.GaveUp
	}
	return lock.Classify(err)
}

// votes are the attempt's counts: granted, said taken, unanswered (may
// have set the key), and all the votes seen.
func (s *nodeSteps) votes() (granted, taken, unsure, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted, s.taken, s.unsure, s.n
}

// argAt is a command's argument i as a string, "" if it has none.
func argAt(args []any, i int) string {
	if i >= len(args) {
		return ""
	}
	return fmt.Sprint(args[i])
}

func sha1Of(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// oneLine is an error's text on one line, bounded: redsync joins its
// nodes' errors with newlines.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
	if r := []rune(s); len(r) > 240 {
		s = string(r[:240]) + "…"
	}
	return s
}

// notObtained is a quorum the library did not reach, in words (votes:
// the count alone; said: what the library returned too): it matches
// lock.ErrNotObtained, so the retry policy spaces the next try.
type notObtained struct{ votes, said string }

func (e notObtained) Error() string        { return e.votes + "; redsync returned " + e.said }
func (e notObtained) Is(target error) bool { return target == lock.ErrNotObtained }

// QuorumWords is the denial's count of votes: "lock: not obtained: 2 of
// 5 nodes granted (quorum 3)".
func (e notObtained) QuorumWords() string { return e.votes }
