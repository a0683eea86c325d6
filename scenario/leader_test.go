package scenario_test

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// TestLeader: the leader stops the world past its lease and a second
// candidate is elected meanwhile. With a Redis lock and renewal the first
// wakes and writes as leader too: two leaders act. With etcd's election
// the ledger refuses the stale leader's older revision. The story is
// chained by cues: no seed and no busy machine changes it.
func TestLeader(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("leader")
	var fs []func()
	for _, st := range sc.Strategies {
		if scenario.ServerOf(st) != "redis" && (raceEnabled || !deep()) {
			continue // etcd keeps real time: see realTimeStory
		}
		// etcd keeps real time in both variants: three seeds, at half the
		// scenario's own pace (a lease of 4 s of real time per 1 s of TTL),
		// so that a busy machine's late answers stay inside the lease.
		speed, seeds := float64(outcomeSpeed), 8
		if scenario.ServerOf(st) != "redis" {
			speed, seeds = sc.Speed/2, 3
		}
		fs = append(fs, func() {
			eachAt(t, speed, "leader", st, seeds, nil, func(t *testing.T, o outcome) {
				resumed, ok := o.first(event.KindResume, workerIs(0))
				if !ok {
					t.Fatalf("%s: w00 never woke", st)
				}
				var stale []event.Event // w00's writes after it woke
				for _, e := range o.evs {
					if e.Kind == event.KindWrite && e.Worker == 0 && e.T >= resumed.T {
						stale = append(stale, e)
					}
				}
				overlaps := o.count(event.KindViolation, func(e event.Event) bool {
					return e.Code == check.CodeOverlap && e.Res == "leader"
				})
				if overlaps != 1 || len(stale) != 1 {
					t.Fatalf("%s: %d time(s) two leaders, %d write(s) by w00 after its pause; want 1 and 1", st, overlaps, len(stale))
				}
				if landed := stale[0].OK; landed != (st == "watchdog") {
					t.Errorf("%s: the stale leader's write landed: %v", st, landed)
				}
				if ids, want := beatIDs(o), sc.BeatIDs(st, sc.Defaults); !slices.Equal(ids, want) {
					t.Errorf("%s: beats %v, want %v", st, ids, want)
				}
			})
		})
	}
	together(fs...)
}
