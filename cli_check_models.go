package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The models of `locklab check`: pure functions, apart from the checker
// (porcupine) and the histories (cli_check.go).

// leaseIn is a lock operation: its kind, token and TTL, with its interval
// (the model needs it for expiry: the server applied it somewhere inside).
type leaseIn struct {
	op        string // acquire, release, renew
	token     string
	ttl       int64 // µs
	call, ret int64 // µs
}

// leaseState is who holds the key and until when (µs; the earliest the
// server can have set it to expire).
type leaseState struct {
	holder  string
	expires int64
}

// slack is how far apart the run's clock and the server's may be about an
// expiry: Redlock's drift allowance, 1% of the TTL + 2ms.
func slack(ttl int64) int64 { return ttl/100 + 2000 }

// leaseModel is SET NX PX (acquire), compare-and-delete (release) and
// compare-and-PEXPIRE (renew) on one key whose holder expires.
var leaseModel = porcupine.Model{
	Init: func() interface{} { return leaseState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s, in, ok := state.(leaseState), input.(leaseIn), output.(bool)
		// Free at some instant of [call, ret], allowing for slack?
		mayBeFree := s.holder == "" || s.expires <= in.ret+slack(in.ttl+1)
		mayBeHeld := s.holder != "" && s.expires+slack(in.ttl+1) > in.call
		switch in.op {
		case "acquire":
			if ok {
				return mayBeFree, leaseState{in.token, in.call + in.ttl}
			}
			return mayBeHeld, s
		case "release":
			if ok {
				return (s.holder == in.token || in.token == "") && mayBeHeld, leaseState{}
			}
			if s.holder == in.token && !mayBeFree {
				return false, s
			}
			return true, leaseState{holder: s.holder, expires: s.expires}
		case "renew":
			if ok {
				return s.holder == in.token && mayBeHeld, leaseState{in.token, in.call + in.ttl}
			}
			return true, s
		}
		return false, s
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
		return fmt.Sprintf("held by %.6s until %dµs", s.holder, s.expires)
	},
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
