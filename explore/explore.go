// Package explore sweeps seeds of a simulated run to find the interleavings
// that break a lock, and shrinks each failure to the smallest schedule that
// still breaks it the same way.
package explore

import (
	"context"
	"io"
	"strings"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// Outcome is what one seed's run came to, read from its tally.
type Outcome struct {
	Seed      uint64
	Verdict   string // the summary's verdict, as printed
	Class     string // the verdict without its counts: OVERSOLD, UNSAFE …
	Violation bool   // the lock let its data or its exclusion break
	Sold      int
	HasStock  bool
	Overlaps  int
	Lost      int
	Events    int    // the events of its log
	Steps     uint64 // the steps the simulation scheduled
	Workers   int    // the workers that raced (a cast scenario sets its own)
}

// ErrRealTime says a run would keep real time: only a simulation has
// seeds whose interleavings can be swept and replayed.
type ErrRealTime struct{ Why string }

func (e *ErrRealTime) Error() string {
	return "explore is simulation-only: this run would keep real time (" + e.Why + "), so its seeds do not fix its interleavings"
}

// Run runs cfg once on a fresh embedded store, writing its event log to
// events when set, and says what it came to.
func Run(ctx context.Context, cfg scenario.Config, events io.Writer) (Outcome, error) {
	st, err := store.Open(ctx, store.Config{Nodes: cfg.Params.Nodes, PoolSize: min(max(cfg.Params.Workers, 10), 256)})
	if err != nil {
		return Outcome{}, err
	}
	defer st.Close()
	cfg.Events = events
	cfg.Realtime, cfg.Paced = false, false
	r, err := scenario.Start(ctx, st, cfg)
	if err != nil {
		return Outcome{}, err
	}
	if !r.Simulated() {
		r.Stop()
		_ = r.Wait()
		return Outcome{}, &ErrRealTime{strings.TrimPrefix(r.Header.Time, "real time: ")}
	}
	werr := r.Wait() // a server's failure is a verdict, like any other
	if ctx.Err() != nil {
		return Outcome{}, ctx.Err()
	}
	if werr != nil && strings.HasPrefix(werr.Error(), "event log") {
		return Outcome{}, werr
	}
	s := r.Summary()
	o := Outcome{Seed: cfg.Seed, Verdict: s.Verdict, Class: Class(s.Verdict), Sold: s.Successes, HasStock: s.HasStock,
		Overlaps: s.Overlaps, Lost: s.LostUpdates, Events: r.Log.Len(), Steps: r.Steps(), Workers: r.Header.Params.Workers}
	o.Violation = Violating(o.Class)
	return o, nil
}

// Class is a verdict without its counts: "OVERSOLD — 3 sold of 1 in
// stock" is OVERSOLD, "DEADLOCK, then 2 overlap entries" is
// "DEADLOCK, THEN OVERLAP".
func Class(verdict string) string {
	c, _, _ := strings.Cut(verdict, " — ")
	if strings.HasPrefix(c, "DEADLOCK, then") {
		return "DEADLOCK, THEN OVERLAP"
	}
	return c
}

// violating are the classes of a lock that broke: its data or its
// exclusion. A server's failure or doubt says nothing about the lock, and
// fencing or idempotency saved the data.
var violating = map[string]bool{"OVERSOLD": true, "DUPLICATE": true, "DEADLOCK": true, "DEADLOCK, THEN OVERLAP": true, "UNSAFE": true}

// Violating reports whether a verdict class is a broken lock.
func Violating(class string) bool { return violating[class] }

// Slug is a class as a file name: "DEADLOCK, THEN OVERLAP" is
// deadlock-then-overlap.
func Slug(class string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(class) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "verdict"
	}
	return b.String()
}
