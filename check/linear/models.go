package linear

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"
)

// The models of `locklab check`: pure functions, apart from the checker
// (porcupine) and the histories (check.go).

// leaseIn is a lock operation: its kind, token and TTL, with its interval
// (the model needs it for expiry: the server applied it somewhere inside)
// and what the lock is.
type leaseIn struct {
	// op is acquire, release or renew as the log says; maybe (an acquire
	// never answered: it may have taken the lock), maybe-release and
	// maybe-renew (a release or renewal whose effect is unknown: never
	// answered, or given up on by its library), undo (a release the
	// log does not show: Redlock's partial votes, its release over the
	// nodes) or session-end (the holder crashed: a lock without a TTL goes
	// with its session).
	op        string
	token     string
	holder    string // who holds after an acquire: the token, else the worker
	worker    int32
	ttl       int64 // µs
	call, ret int64 // µs
	traits    lockTraits
	quorum    bool // the key is a Redlock quorum: a denial says nothing of it
}

// forever is an expiry that never comes.
const forever = math.MaxInt64 / 2

// leaseState is who holds the key and the window it expires in (µs): not
// before expLo, surely by expHi. A TTL runs from the instant the server
// set the key, somewhere between the acquire's call and its return.
type leaseState struct {
	holder       string
	owner        int32
	expLo, expHi int64
}

// slack is how far apart the run's clock and the server's may be about an
// expiry: Redlock's drift allowance, 1% of the TTL + 2ms.
func slack(ttl int64) int64 { return ttl/100 + 2000 }

// take is the state after in took the lock.
func (in leaseIn) take() leaseState {
	s := leaseState{holder: in.holder, owner: in.worker, expLo: forever, expHi: forever}
	// A lock without a TTL, or naive's SETNX whose EXPIRE may never have
	// come (its holder crashed in between), holds until let go.
	if in.ttl > 0 && !in.traits.noTTL && !(in.op == "maybe" && in.traits.anyDel) {
		s.expLo = in.call + in.ttl - in.traits.early
		if !in.traits.keepAlive {
			s.expHi = in.ret + in.ttl
		}
	}
	return s
}

// leaseModel is SET NX PX (acquire), compare-and-delete (release) and
// compare-and-PEXPIRE (renew) on one key whose holder expires, with what
// the strategy's lock is (traits) and what the log cannot show.
var leaseModel = porcupine.Model{
	Init: func() interface{} { return leaseState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		return leaseStep(state.(leaseState), input.(leaseIn), output.(bool))
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(leaseIn)
		tok := in.token
		if len(tok) > 6 {
			tok = tok[:6]
		}
		return fmt.Sprintf("%s %s → %v", in.op, tok, output)
	},
	DescribeState: func(state interface{}) string {
		s := state.(leaseState)
		if s.holder == "" {
			return "free"
		}
		return fmt.Sprintf("held by %.6s, expiring in [%dµs, %dµs]", s.holder, s.expLo, s.expHi)
	},
}

func leaseStep(s leaseState, in leaseIn, ok bool) (bool, leaseState) {
	sl := slack(in.ttl + 1)
	held := s.holder != ""
	// Free, or held, at some instant of [call, ret], allowing for slack?
	mayBeFree := !held || s.expLo <= in.ret+sl
	mayBeHeld := held && s.expHi > in.call-sl
	mine := held && s.holder == in.holder
	switch in.op {
	case "acquire":
		switch {
		case ok:
			return mayBeFree, in.take()
		case in.quorum: // too few votes: held, or split, or unanswered
			return true, s
		case in.traits.waiters: // another waiter's key was first
			return true, s
		}
		return mayBeHeld, s
	case "maybe":
		if mayBeFree {
			return true, in.take()
		}
		return true, s
	case "maybe-release":
		// Its own key may have been deleted from its call on, or kept
		// until it expires: both, as the window of its expiry.
		if mine {
			s.expLo = min(s.expLo, in.call)
		}
		return true, s
	case "maybe-renew":
		// Its own key, if still there when the renewal ran, may have had
		// its expiry moved to ttl past the return, or not.
		if mine && mayBeHeld && !in.traits.keepAlive {
			s.expHi = max(s.expHi, in.ret+in.ttl)
		}
		return true, s
	case "undo":
		if s.holder == in.token {
			return true, leaseState{}
		}
		return true, s
	case "session-end":
		if held && s.owner == in.worker && in.traits.noTTL {
			return true, leaseState{}
		}
		return true, s
	case "release":
		switch {
		case in.token == "": // a key deleted, not a lock let go: nothing to check
			if ok {
				return true, leaseState{}
			}
			return true, s
		case in.traits.anyDel && ok: // DEL deleted a key: whoever's
			return mayBeHeld, leaseState{}
		case in.traits.anyDel: // DEL found none
			return mayBeFree, leaseState{}
		case ok:
			return mine && mayBeHeld, leaseState{}
		case mine && !mayBeFree: // refused while surely still ours
			return false, s
		case mine: // it had lapsed
			return true, leaseState{}
		}
		return true, s
	case "renew":
		if ok {
			n := in.take()
			return mine && mayBeHeld, n
		}
		return true, s
	}
	return false, s
}

// regIn is a register operation: a read of, or a write of, value.
type regIn struct {
	op    string
	value int64
}

// registerModel is one value: a read returns the last write.
var registerModel = porcupine.Model{
	Init: func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		v, in := state.(int64), input.(regIn)
		if in.op == "write" {
			return true, in.value
		}
		return output.(int64) == v, v
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(regIn)
		if in.op == "write" {
			return fmt.Sprintf("write %d", in.value)
		}
		return fmt.Sprintf("read → %d", output)
	},
}

// sectionIn is a worker entering or leaving a critical section.
type sectionIn struct {
	op     string
	worker int32
}

// sectionModel is a mutex: one worker inside at a time.
var sectionModel = porcupine.Model{
	Init: func() interface{} { return int32(-1) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in, holder := input.(sectionIn), state.(int32)
		if in.op == "enter" {
			return holder == -1, in.worker
		}
		return holder == in.worker, int32(-1)
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(sectionIn)
		return fmt.Sprintf("w%02d %s", in.worker, in.op)
	},
}
