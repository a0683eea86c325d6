package libs

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
)

// seenClient is the rueidis client the library talks through, seen at
// the protocol: each of the library's scripts is told apart by its SHA-1
// and its token (ARGV[1]); an acquire lands in its call's step, an
// extension is a renewed or renew_failed step of its own, a delete is
// the release's answer. A holder's pause holds the library's commands
// (as a stopped process sends nothing); a dead holder's commands are not
// sent at all.
type seenClient struct {
	rueidis.Client
	kit   *lock.Kit
	key   string
	ttl   time.Duration
	cache bool // client-side caching: the server tells the library when its key changes

	mu   sync.Mutex
	dead map[string]bool       // tokens of holders that died
	held map[string]*heldState // by token
}

// heldState is what the protocol showed of one held lock.
type heldState struct {
	last string // the last extension, in words
	del  deleted
}

// deleted is what the library's delete of a released lock answered.
type deleted struct {
	sent  bool
	n     int64
	err   error
	early bool // its deadline had passed before the call: nothing went out
}

var errDead = errors.New("the holder's process is dead: nothing sent")

func newSeenClient(c rueidis.Client, kit *lock.Kit, key string, ttl time.Duration) *seenClient {
	return &seenClient{Client: c, kit: kit, key: key, ttl: ttl, dead: map[string]bool{}, held: map[string]*heldState{}}
}

// which names the library's script a command runs ("" for anything
// else) and the token it carries.
func which(args []string) (script, tok string) {
	if len(args) < 5 || args[2] != "1" {
		return "", ""
	}
	switch strings.ToUpper(args[0]) {
	case "EVALSHA":
		script = rueidisScripts[strings.ToLower(args[1])]
	case "EVAL":
		h := sha1.Sum([]byte(args[1]))
		script = rueidisScripts[hex.EncodeToString(h[:])]
	}
	if script == "" {
		return "", ""
	}
	return script, hex.EncodeToString([]byte(args[4]))
}

// Do sends cmd and sees what came back.
func (c *seenClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands() // read before sending: the library recycles cmd
	script, tok := which(args)
	if script == "" {
		return c.Client.Do(ctx, cmd)
	}
	name := strings.ToUpper(args[0])
	c.mu.Lock()
	dead := c.dead[tok]
	c.mu.Unlock()
	if dead {
		return rueidis.NewErrorResult(errDead)
	}
	switch script {
	case "extend":
		// A paused holder sends nothing until it resumes. Its library's
		// timers run on, so an extension due during the pause goes out
		// when it ends, bounded by the deadline it had when due: past it,
		// the library gives the lock up without sending.
		if err := c.kit.Hold(context.WithoutCancel(ctx)); err != nil {
			return rueidis.NewErrorResult(err)
		}
	case "acquire", "acquire-px":
		// The worker's own call: it stops at its gate, as its go-redis
		// commands do.
		if err := clock.PassGate(ctx); err != nil {
			return rueidis.NewErrorResult(err)
		}
	}
	deadline := args[len(args)-1] // the acquire's or extension's deadline, read before cmd is recycled
	sent := c.kit.Now()
	// rueidis sends nothing for a context already done (its pipe's Do
	// returns the context's error first): a deadline past before the
	// call means nothing went out. Past during the call, it may have.
	early := ctx.Err() != nil
	resp := c.Client.Do(ctx, cmd)
	n, err := resp.AsInt64()
	reply := fmt.Sprint(n)
	switch {
	case rueidis.IsRedisNil(err):
		reply, err = "nil", nil
	case err != nil && resp.Error() == nil:
		reply, err = "OK", nil // the acquire's SET answers OK
	case err != nil:
		reply = strings.SplitN(err.Error(), " ", 2)[0] // NOSCRIPT: it sends the script itself next
	}
	switch script {
	case "acquire", "acquire-px":
		if w, ok := ctx.Value(rcallKey{}).(*rcall); ok {
			w.note(name, reply)
			if reply == "OK" {
				ttl := c.ttl // SET PX: the TTL asked, from when the server set it
				if script == "acquire" {
					ttl = c.left(deadline)
				}
				w.mu.Lock()
				w.tok, w.ttl = tok, ttl
				w.mu.Unlock()
			}
		}
	case "extend":
		if !noScript(err) { // it sends the script itself next
			c.extended(tok, sent, c.left(deadline), name, n, err, early)
		}
	case "delete":
		c.mu.Lock()
		if h := c.held[tok]; h != nil {
			h.del = deleted{sent: true, n: n, err: err, early: early}
		}
		c.mu.Unlock()
	}
	return resp
}

// left is the TTL an acquire or an extension really gives, in the run's
// time, counted from its answer: the library reads its deadline (the
// command's last argument, ms of the wall clock, cut to the millisecond)
// before it sends the command — an extension when it falls due, and a
// paused holder sends that only when it resumes — so the key lapses sooner
// than now+validity. The wall clock is read here as the library reads it:
// rueidislock keeps real time, and the embedded nodes then follow the wall
// clock (Store.FollowWallClock).
func (c *seenClient) left(deadline string) time.Duration {
	ms, err := strconv.ParseInt(deadline, 10, 64)
	validity := c.kit.Real(c.ttl)
	if err != nil || validity <= 0 {
		return c.ttl
	}
	real := time.Until(time.UnixMilli(ms))
	// A deadline already past when the answer came (a busy machine, a
	// slow link) left the key a moment at most: the least TTL a step can
	// carry, never none, which a log reads as a lock that does not lapse.
	return min(max(time.Duration(float64(c.ttl)*float64(real)/float64(validity)), time.Microsecond), c.ttl)
}

// extended records one of the library's extensions, which keeps the key
// for ttl from when it was sent.
func (c *seenClient) extended(tok string, sent, ttl time.Duration, name string, n int64, err error, early bool) {
	step := lock.Step{Kind: lock.StepRenewFailed, Key: c.key, Token: tok, Node: -1, Call: sent}
	switch {
	case err != nil:
		// The library stopped waiting on its own deadline: the extension
		// may have set the key's deadline (TTL: what it would have left),
		// or not. Any other error is told as the library's answer.
		step.Op = "renew"
		step.Outcome, step.Msg = gaveUp(err, early, "extended", "its extension failed: ")
		if step.Outcome == lock.GaveUp {
			step.TTL = ttl
		}
	case n != 1:
		step.Msg = "its extension found the key gone or another's (" + name + "→0)"
	default:
		step.Kind, step.TTL, step.Msg = lock.StepRenewed, ttl, "PEXPIREAT its deadline when due; sent "+name+"→1"
	}
	c.mu.Lock()
	if h := c.held[tok]; h != nil {
		h.last = ""
		if step.Kind == lock.StepRenewFailed {
			h.last = step.Msg
		}
	}
	c.mu.Unlock()
	c.kit.Emit(step)
}

func noScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// hold starts watching a held lock's token.
func (c *seenClient) hold(tok string) {
	c.mu.Lock()
	c.held[tok] = &heldState{}
	c.mu.Unlock()
}

// lastRenewal says why the library gave the lock up, as far as the
// protocol showed.
func (c *seenClient) lastRenewal(tok string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.held[tok]; h != nil && h.last != "" {
		return h.last
	}
	if c.cache {
		return "the server told it the key changed"
	}
	return "it gave the lock up"
}

// released is what the library's delete answered, and forgets the token.
func (c *seenClient) released(tok string) deleted {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := deleted{}
	if h := c.held[tok]; h != nil {
		d = h.del
	}
	delete(c.held, tok)
	return d
}

// kill makes the holder of tok dead: nothing more of its is sent.
func (c *seenClient) kill(tok string) {
	c.mu.Lock()
	c.dead[tok] = true
	delete(c.held, tok)
	c.mu.Unlock()
}

// rcall is what one call of the library sent, the token it set and the
// TTL its deadline gave.
type rcall struct {
	wire
	tok string
	ttl time.Duration
}

type rcallKey struct{}

func watchCall(ctx context.Context) (context.Context, *rcall) {
	w := &rcall{}
	return context.WithValue(ctx, rcallKey{}, w), w
}

func (w *rcall) token() (string, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tok, w.ttl
}

// set reports whether the call's acquire set the key (its SET answered OK).
func (w *rcall) set() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tok != ""
}
