// Package workshop runs one race across machines on one real Redis: a host
// opens rounds and checks them, guests on other machines join with workers
// of their own, and their events travel back to the host through a Redis
// Stream under the round's key prefix, stamped with the Redis server's
// clock so that lanes from machines whose clocks disagree line up.
//
// Keys, for room R:
//
//	locklab:room-R:host        the host is here (PX, renewed)
//	locklab:room-R:round       the current round (JSON): scenario, strategy, start, attendees
//	locklab:room-R:lobby       hash: attendee name → workers
//	locklab:room-R:seen:NAME   the attendee is here (PX, renewed)
//	locklab:room-R-rN:…        round N's keys: stock, lock, and events (the stream)
//
// A new round deletes the last one's keys; the host's leaving deletes the
// room's.
package workshop

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/store"

	"github.com/locklab/locklab/scenario"
)

// Timing of presence and of the stream.
const (
	presentTTL   = 3 * time.Second        // a joiner unheard of for this long has gone
	renewEvery   = 750 * time.Millisecond // presence renewal
	hostTTL      = 5 * time.Second
	pollEvery    = 100 * time.Millisecond // a joiner looks for a new round
	flushEvery   = 25 * time.Millisecond  // a joiner sends its events
	readBlock    = 100 * time.Millisecond // the host waits on the stream
	streamMaxLen = 50_000                 // entries (batches) the stream keeps, about
	// DefaultLead is how far ahead a round's start is set, so every joiner
	// has seen it before it begins.
	DefaultLead = 1500 * time.Millisecond
	// MaxAttendees bounds a room; MaxWorkers an attendee's workers.
	MaxAttendees = 256
	MaxWorkers   = 20
)

// DefaultRoom is the room host and join use unless told otherwise.
const DefaultRoom = "workshop"

// MaxName is the longest name of a room or an attendee.
const MaxName = 32

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,31}$`)

// CheckName refuses names that cannot be a lane's or a key's.
func CheckName(what, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("--%s %q: use 1 to %d letters, digits, '-' or '_', starting with a letter or digit", what, name, MaxName)
	}
	return nil
}

// CleanName makes a name out of anything a client sends (an SSH user):
// only letters, digits, '-' and '_' are kept, leading '-' and '_' are
// dropped, and it is cut to MaxName; "" when nothing is left.
func CleanName(s string) string {
	var b strings.Builder
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (r == '-' || r == '_') && b.Len() > 0)
		if ok {
			b.WriteRune(r)
		}
		if b.Len() == MaxName {
			break
		}
	}
	return b.String()
}

// Attendee is one machine's share of a round.
type Attendee struct {
	Name    string `json:"name"`
	Workers int    `json:"workers"`
	First   int    `json:"first"` // its first lane
	Key     string `json:"key"`   // its public key, as the host read it (see auth.go)
}

// Round is what the host publishes for joiners.
type Round struct {
	Host      string       `json:"host"` // the hosting's id: N counts from 1 in each
	N         int          `json:"n"`
	ID        string       `json:"id"`       // the round's own: random, named by its batches
	HostKey   string       `json:"host_key"` // the host's public key (see auth.go)
	Scenario  string       `json:"scenario"`
	Strategy  string       `json:"strategy"`
	Params    event.Params `json:"params"`
	Seed      uint64       `json:"seed"`
	Start     int64        `json:"start_us"` // on the Redis server's clock
	Attendees []Attendee   `json:"attendees"`
}

// id tells rounds apart across hosts.
func (r *Round) id() string { return r.ID }

// RunID is the id of the round's keys.
func (r *Round) RunID(room string) string { return fmt.Sprintf("room-%s-r%d", room, r.N) }

func (r *Round) attendee(name string) (Attendee, bool) {
	for _, a := range r.Attendees {
		if a.Name == name {
			return a, true
		}
	}
	return Attendee{}, false
}

// Lanes names the round's workers by attendee: alice/1, alice/2, bob/1…
func (r *Round) Lanes() []string {
	var lanes []string
	for _, a := range r.Attendees {
		for i := range a.Workers {
			lanes = append(lanes, fmt.Sprintf("%s/%d", a.Name, i+1))
		}
	}
	return lanes
}

func roomID(room string) string { return "room-" + room }

// syncSamples is how many round trips a clock sync takes: the shortest
// bounds the offset's error (half of it), and on a busy machine most are
// long. Lanes of two machines are ordered no better than their offsets.
const syncSamples = 20

// ServerClock reads the Redis server's clock from here: its offset from
// the local clock is measured with TIME, keeping the sample with the
// shortest round trip.
type ServerClock struct {
	offset time.Duration
	// Err bounds the offset's error: half the shortest round trip.
	Err time.Duration
	// Skew shifts this machine's clock, to show that skew does not matter.
	Skew time.Duration
	// Miss is added to the offset once it is measured: a sync that missed
	// by this much, beyond what Err says, to show that the order of the
	// lock's hand-overs does not rest on the sync.
	Miss time.Duration
}

func (c *ServerClock) local() time.Time { return time.Now().Add(c.Skew) }

// Sync measures the offset.
func (c *ServerClock) Sync(ctx context.Context, rc store.Redis) error {
	best := time.Duration(-1)
	for range syncSamples {
		t0 := c.local()
		st, err := rc.Time(ctx).Result()
		if err != nil {
			return err
		}
		t1 := c.local()
		rtt := t1.Sub(t0)
		if best < 0 || rtt < best {
			best = rtt
			c.offset = st.Sub(t0.Add(rtt / 2))
			c.Err = rtt / 2
		}
	}
	c.offset += c.Miss
	return nil
}

// Now is the server's time now, in µs since the epoch.
func (c *ServerClock) Now() int64 { return c.local().Add(c.offset).UnixMicro() }

// Until is how long from now until server time us.
func (c *ServerClock) Until(us int64) time.Duration {
	return time.Duration(us-c.Now()) * time.Microsecond
}

// readRound reads the current round, or nil when there is none.
func readRound(ctx context.Context, rc store.Redis, key string) (*Round, string, error) {
	b, err := rc.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, "", err
	}
	if b["spec"] == "" {
		return nil, "", nil
	}
	var r Round
	if err := json.Unmarshal([]byte(b["spec"]), &r); err != nil {
		return nil, "", fmt.Errorf("the room's round is unreadable: %w", err)
	}
	if err := r.check(); err != nil {
		return nil, "", fmt.Errorf("the room's round is unreadable: %w", err)
	}
	return &r, b["state"], nil
}

// check refuses a round that no host of this locklab wrote: whoever can
// write to the Redis can write one, and a joiner prints its names.
func (r *Round) check() error {
	if err := scenario.Joinable(r.Scenario, r.Strategy); err != nil {
		return err
	}
	if _, err := hex.DecodeString(r.ID); err != nil || len(r.ID) != 32 {
		return fmt.Errorf("it has no round ID: is the host's locklab as new as this one?")
	}
	if _, err := parseKey(r.HostKey); err != nil {
		return fmt.Errorf("its host key is not one")
	}
	if len(r.Attendees) > MaxAttendees {
		return fmt.Errorf("%d attendees; a room holds at most %d", len(r.Attendees), MaxAttendees)
	}
	for _, a := range r.Attendees {
		if !nameRE.MatchString(a.Name) || a.Workers < 1 || a.Workers > MaxWorkers || a.First < 0 || a.First > event.MaxWorkers {
			return fmt.Errorf("an attendee is not one this locklab names")
		}
	}
	return nil
}
