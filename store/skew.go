package store

import "time"

// Skew is how far one node's clock is from the run's: jumps moved it at
// once, a slew moves it gradually — the node's clock runs fast until it
// has gained the slew's amount, as ntpd does when it corrects a clock
// without stepping it. A node's time at virtual time v is v + At(v). The
// zero Skew is a clock in step with the run's. It is not safe for
// concurrent use: its node's mutex guards it.
type Skew struct {
	jumped  time.Duration // moved at once, and slews that are over
	from    time.Duration // virtual time the slew in progress began
	over    time.Duration // how long it lasts
	by      time.Duration // how much it gains in all
	slewing bool
}

// At is the offset at virtual time v. It never decreases as v grows.
func (s *Skew) At(v time.Duration) time.Duration {
	if !s.slewing || v <= s.from {
		return s.jumped
	}
	if v >= s.from+s.over {
		return s.jumped + s.by
	}
	return s.jumped + time.Duration(float64(s.by)*float64(v-s.from)/float64(s.over))
}

// Jump moves the clock forward by d at once (d ≤ 0 does nothing).
func (s *Skew) Jump(d time.Duration) {
	if d > 0 {
		s.jumped += d
	}
}

// Slew makes the clock gain by over the virtual time from now on: it
// runs (over+by)/over times as fast as the run's until then. A slew in
// progress keeps what it has gained so far. by ≤ 0 does nothing; over ≤ 0
// is a jump.
func (s *Skew) Slew(now, by, over time.Duration) {
	if by <= 0 {
		return
	}
	s.jumped = s.At(now)
	if over <= 0 {
		s.slewing = false
		s.jumped += by
		return
	}
	s.from, s.over, s.by, s.slewing = now, over, by, true
}

// Rate is how fast the clock runs at virtual time v, against the run's:
// 1 in step, 2 while slewing a TTL over a TTL.
func (s *Skew) Rate(v time.Duration) float64 {
	if !s.slewing || v < s.from || v >= s.from+s.over {
		return 1
	}
	return float64(s.over+s.by) / float64(s.over)
}
