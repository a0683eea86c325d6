package store

import "github.com/locklab/locklab/clock"

// Clock is the run's one clock (see package clock).
type Clock = clock.Clock

// Speed limits of a virtual clock (see package clock).
const (
	MinSpeed = clock.MinSpeed
	MaxSpeed = clock.MaxSpeed
)

// ErrFixedSpeed: see package clock.
var ErrFixedSpeed = clock.ErrFixedSpeed

// NewClock returns a virtual clock (see clock.NewClock).
func NewClock(speed float64) *Clock { return clock.NewClock(speed) }

// NewScaledClock returns a real server's clock (see clock.NewScaledClock).
func NewScaledClock(slowmo float64) *Clock { return clock.NewScaledClock(slowmo) }
