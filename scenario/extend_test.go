package scenario_test

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
)

// extend-late on one seed: each way's exact outcome, and the checker
// finding the double holder and the lost sale in the log. locklab's own
// ways are simulated; the libraries' (their own Refresh and Extend,
// unmodified) keep real time, here at 4×.
func TestExtendLateOutcomes(t *testing.T) {
	sc, err := scenario.Lookup("extend-late")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		way                       string
		extend                    event.Kind
		extendMsg                 string
		overlaps, lost, successes int
		final                     int64
	}{
		{"blind", event.KindRenewed, "PEXPIRE→1", 1, 1, 2, 1},
		{"ignored", event.KindRenewFailed, "EVALSHA→0", 1, 1, 2, 1},
		{"checked", event.KindRenewFailed, "EVALSHA→0", 1, 0, 1, 1},
		// Both libraries return an error, which w00 reads: no stale write.
		{"redislock", event.KindRenewFailed, `Refresh returned "redislock: not obtained": not extended`, 1, 0, 1, 1},
		{"redsync", event.KindRenewFailed, `Extend returned false, "lock already taken, locked nodes: [0]": not extended`, 1, 0, 1, 1},
	} {
		t.Run(c.way, func(t *testing.T) {
			library := c.way == "redislock" || c.way == "redsync"
			r := runAt(t, nil, 4, scenario.Config{Scenario: "extend-late", Strategy: c.way, Seed: 7, Params: sc.Defaults})
			if r.Simulated() == library {
				t.Fatalf("simulated: %v; want locklab's own ways simulated on the embedded store, the libraries' in real time", r.Simulated())
			}
			s := r.Summary()
			if s.Overlaps != c.overlaps || s.LostUpdates != c.lost || s.Successes != c.successes || s.FinalStock != c.final {
				t.Fatalf("%s: overlaps %d lost %d successes %d final %d; want %d %d %d %d", s.Verdict,
					s.Overlaps, s.LostUpdates, s.Successes, s.FinalStock, c.overlaps, c.lost, c.successes, c.final)
			}
			o := outcome{s: s, evs: r.Log.Events()}
			ext := o.count(c.extend, func(e event.Event) bool { return e.Worker == 0 && strings.HasPrefix(e.Msg, c.extendMsg) })
			if ext != 1 {
				t.Fatalf("want w00's one extend (%s %s)", c.extend, c.extendMsg)
			}
			// w00's extend comes after its resume, while w01 holds the lock.
			var resumed, w01In, extended bool
			for _, e := range o.evs {
				switch {
				case e.Kind == event.KindAcquired && e.Worker == 1:
					w01In = true
				case e.Kind == event.KindResume && e.Worker == 0:
					resumed = true
				case e.Kind == c.extend && e.Worker == 0:
					extended = resumed && w01In
				}
			}
			if !extended {
				t.Fatal("w00's extend should follow its resume, with w01 holding the lock")
			}
			wrote := o.count(event.KindWrite, func(e event.Event) bool { return e.Worker == 0 })
			if c.lost == 0 && wrote != 0 || c.lost > 0 && wrote != 1 {
				t.Fatalf("w00 wrote %d time(s)", wrote)
			}
			if c.lost > 0 && o.count(event.KindViolation, func(e event.Event) bool { return e.Code == "lost_update" }) != 1 {
				t.Fatal("the checker should find the lost update in the log")
			}
			if library && o.count(event.KindAcquired, func(e event.Event) bool { return e.Worker == 0 && e.Token != "" }) != 1 {
				t.Fatal("w00 should hold the library's own lock, with its token")
			}
		})
	}
}

// late-grant on one seed, simulated: the grant heard of after the TTL,
// trusted (two holders, a lost sale) or counted from the request (no
// overlap; w00 asks again and sells).
func TestLateGrantOutcomes(t *testing.T) {
	sc, err := scenario.Lookup("late-grant")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		way                              string
		overlaps, lost, successes, lost0 int
		final                            int64
	}{
		{"trust", 1, 1, 2, 0, 1},
		{"validity", 0, 0, 2, 1, 0},
	} {
		t.Run(c.way, func(t *testing.T) {
			r := run(t, nil, scenario.Config{Scenario: "late-grant", Strategy: c.way, Seed: 7, Params: sc.Defaults})
			if !r.Simulated() {
				t.Fatal("late-grant should be simulated on the embedded store")
			}
			s := r.Summary()
			if s.Overlaps != c.overlaps || s.LostUpdates != c.lost || s.Successes != c.successes || s.FinalStock != c.final {
				t.Fatalf("%s: overlaps %d lost %d successes %d final %d; want %d %d %d %d", s.Verdict,
					s.Overlaps, s.LostUpdates, s.Successes, s.FinalStock, c.overlaps, c.lost, c.successes, c.final)
			}
			o := outcome{s: s, evs: r.Log.Events()}
			if n := o.count(event.KindLockLost, func(e event.Event) bool { return e.Worker == 0 }); n != c.lost0 {
				t.Fatalf("w00's lock_lost: %d, want %d", n, c.lost0)
			}
			// w00 hears of its first grant only after w01 has taken the lapsed lock.
			var w01, late bool
			for _, e := range o.evs {
				if e.Kind == event.KindAcquired {
					if e.Worker == 1 {
						w01 = true
					} else if !late {
						late = true
						if !w01 || e.T < sc.Defaults.TTL.D() {
							t.Fatalf("w00's grant at %v, w01 in: %v; want it after the TTL, w01 holding", e.T, w01)
						}
					}
				}
			}
			if c.lost > 0 && o.count(event.KindViolation, func(e event.Event) bool { return e.Code == "overlap" }) != 1 {
				t.Fatal("the checker should find the two holders in the log")
			}
		})
	}
}
