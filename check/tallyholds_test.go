package check_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
)

// The tally's holds and lapses: a renewal moves a hold's deadline, a
// hold lapses once however many events say so, an expired event no hold
// explains is a lapse of its own, a lock without a TTL never lapses, and a
// release names the job where the reservation was held.
func TestTallyCountsHoldsAndLapsesOnce(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ev := func(w int32, k scenario.Kind, at int, res string, ttl int, ok bool) scenario.Event {
		e := scenario.Event{Worker: w, Kind: k, T: ms(at), Res: res, TTL: ms(ttl), OK: ok, Has: scenario.HasOK}
		if ttl > 0 {
			e.Has |= scenario.HasTTL
		}
		return e
	}
	evs := scenario.Slice{
		// w00: renewed in time, released at 150 ms of a 100 ms TTL: no lapse.
		ev(0, scenario.KindAcquired, 0, "lock:a", 100, false),
		ev(0, scenario.KindRenewed, 80, "lock:a", 100, true),
		ev(0, scenario.KindRelease, 150, "lock:a", 0, true),
		// w01: released after its TTL: one lapse.
		ev(1, scenario.KindAcquired, 200, "lock:a", 100, false),
		ev(1, scenario.KindRelease, 350, "lock:a", 0, true),
		// w02: its reservation expires, then its delete (of the job) is
		// refused: one lapse, not two.
		ev(2, scenario.KindAcquired, 400, "reserved:job:1", 100, false),
		ev(scenario.System, scenario.KindExpired, 500, "reserved:job:1", 0, false),
		ev(2, scenario.KindReleaseFailed, 700, "job:1", 0, false),
		// w03: a session lock with no TTL, released late: no lapse.
		ev(3, scenario.KindAcquired, 800, "lock:b", 0, false),
		ev(3, scenario.KindRelease, 5000, "lock:b", 0, true),
		// An expired event no hold explains.
		ev(scenario.System, scenario.KindExpired, 5100, "lock:c", 0, false),
		// w04: crashed holding it; its done drops the hold uncounted.
		ev(4, scenario.KindAcquired, 5200, "lock:a", 100, false),
		ev(4, scenario.KindDone, 5300, "", 0, false),
	}
	tl := scenario.TallyOf(evs)
	if got := tl.Get(scenario.NLapses); got != 3 {
		t.Errorf("lapses %d, want 3 (w01's late release, w02's reservation, the unexplained expiry)", got)
	}
	if got := tl.Get(scenario.NHolds); got != 4 {
		t.Errorf("holds %d, want 4", got)
	}
	if got, want := tl.HoldTotal(), ms(150+150+300+4200); got != want {
		t.Errorf("hold time %v, want %v", got, want)
	}
	bins := 0
	for i := range scenario.HoldBinCount {
		bins += tl.HoldBin(i)
	}
	if bins != 4 || tl.HoldBin(scenario.HoldBinOf(ms(150))) != 2 {
		t.Errorf("hold bins hold %d (want 4), %d of 150 ms (want 2)", bins, tl.HoldBin(scenario.HoldBinOf(ms(150))))
	}
	for _, c := range []struct {
		d   time.Duration
		bin int
	}{{0, 0}, {500 * time.Microsecond, 0}, {501 * time.Microsecond, 1}, {time.Millisecond, 1}, {time.Hour, scenario.HoldBinCount - 1}} {
		if got := scenario.HoldBinOf(c.d); got != c.bin {
			t.Errorf("HoldBinOf(%v) = %d, want %d", c.d, got, c.bin)
		}
		if e := scenario.HoldBinEdge(c.bin); e != 0 && c.d > e {
			t.Errorf("%v is above its bin's edge %v", c.d, e)
		}
	}
}

// A once-only effect's writes are counted per worker: what the scoreboard
// calls credits.
func TestTallyCountsEffectsPerWorker(t *testing.T) {
	evs := scenario.Slice{
		{Worker: scenario.System, Kind: scenario.KindInit, Res: "credit", Code: scenario.LimitOnce},
		{Worker: 0, Kind: scenario.KindWrite, Res: "credit", OK: true, Has: scenario.HasOK},
		{Worker: 1, Kind: scenario.KindWrite, Res: "credit", OK: true, Has: scenario.HasOK},
		{Worker: 1, Kind: scenario.KindWrite, Res: "processed", OK: true, Has: scenario.HasOK},
		{Worker: 2, Kind: scenario.KindWrite, Res: "credit", OK: false, Has: scenario.HasOK},
	}
	tl := scenario.TallyOf(evs)
	for w, want := range []int{1, 1, 0} {
		if got := tl.Worker(w, scenario.WEffects); got != want {
			t.Errorf("w%02d effects %d, want %d", w, got, want)
		}
	}
}
