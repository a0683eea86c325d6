package store

import (
	"context"
	"time"
)

// Beat renews an owner's heartbeat on a server beyond Redis every
// quarter of HeartbeatTTL, until stopped. A beat that fails is tried again
// at the next tick: a server that does not answer for HeartbeatTTL sees
// the run as dead, which it may as well be.
type Beat struct {
	quit chan struct{}
	done chan struct{}
}

// StartBeat starts a heartbeat that calls beat every quarter of
// HeartbeatTTL.
func StartBeat(beat func(context.Context) error) *Beat {
	b := &Beat{quit: make(chan struct{}), done: make(chan struct{})}
	life, end := context.WithCancel(context.Background())
	go func() {
		<-b.quit
		end() // a beat stuck on a server that does not answer ends with the run
	}()
	go func() {
		defer close(b.done)
		t := time.NewTicker(HeartbeatTTL / 4)
		defer t.Stop()
		for {
			select {
			case <-b.quit:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(life, HeartbeatTTL/4)
				_ = beat(ctx)
				cancel()
			}
		}
	}()
	return b
}

// Stop ends the heartbeat and waits for a beat under way; nil is stopped.
func (b *Beat) Stop() {
	if b == nil {
		return
	}
	select {
	case <-b.quit:
	default:
		close(b.quit)
	}
	<-b.done
}
