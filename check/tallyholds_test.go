package check_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// The tally's holds and lapses: a renewal moves a hold's deadline, a
// hold lapses once however many events say so, an expired event no hold
// explains is a lapse of its own, a lock without a TTL never lapses, and a
// release names the job where the reservation was held.
func TestTallyCountsHoldsAndLapsesOnce(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ev := func(w int32, k event.Kind, at int, res string, ttl int, ok bool) event.Event {
		e := event.Event{Worker: w, Kind: k, T: ms(at), Res: res, TTL: ms(ttl), OK: ok, Has: event.HasOK}
		if ttl > 0 {
			e.Has |= event.HasTTL
		}
		return e
	}
	evs := check.Slice{
		// w00: renewed in time, released at 150 ms of a 100 ms TTL: no lapse.
		ev(0, event.KindAcquired, 0, "lock:a", 100, false),
		ev(0, event.KindRenewed, 80, "lock:a", 100, true),
		ev(0, event.KindRelease, 150, "lock:a", 0, true),
		// w01: released after its TTL: one lapse.
		ev(1, event.KindAcquired, 200, "lock:a", 100, false),
		ev(1, event.KindRelease, 350, "lock:a", 0, true),
		// w02: its reservation expires, then its delete (of the job) is
		// refused: one lapse, not two.
		ev(2, event.KindAcquired, 400, "reserved:job:1", 100, false),
		ev(event.System, event.KindExpired, 500, "reserved:job:1", 0, false),
		ev(2, event.KindReleaseFailed, 700, "job:1", 0, false),
		// w03: a session lock with no TTL, released late: no lapse.
		ev(3, event.KindAcquired, 800, "lock:b", 0, false),
		ev(3, event.KindRelease, 5000, "lock:b", 0, true),
		// An expired event no hold explains.
		ev(event.System, event.KindExpired, 5100, "lock:c", 0, false),
		// w04: crashed holding it; its done drops the hold uncounted.
		ev(4, event.KindAcquired, 5200, "lock:a", 100, false),
		ev(4, event.KindDone, 5300, "", 0, false),
	}
	tl := check.TallyOf(evs)
	if got := tl.Get(check.NLapses); got != 3 {
		t.Errorf("lapses %d, want 3 (w01's late release, w02's reservation, the unexplained expiry)", got)
	}
	if got := tl.Get(check.NHolds); got != 4 {
		t.Errorf("holds %d, want 4", got)
	}
	if got, want := tl.HoldTotal(), ms(150+150+300+4200); got != want {
		t.Errorf("hold time %v, want %v", got, want)
	}
	bins := 0
	for i := range check.HoldBinCount {
		bins += tl.HoldBin(i)
	}
	if bins != 4 || tl.HoldBin(check.HoldBinOf(ms(150))) != 2 {
		t.Errorf("hold bins hold %d (want 4), %d of 150 ms (want 2)", bins, tl.HoldBin(check.HoldBinOf(ms(150))))
	}
	for _, c := range []struct {
		d   time.Duration
		bin int
	}{{0, 0}, {500 * time.Microsecond, 0}, {501 * time.Microsecond, 1}, {time.Millisecond, 1}, {time.Hour, check.HoldBinCount - 1}} {
		if got := check.HoldBinOf(c.d); got != c.bin {
			t.Errorf("HoldBinOf(%v) = %d, want %d", c.d, got, c.bin)
		}
		if e := check.HoldBinEdge(c.bin); e != 0 && c.d > e {
			t.Errorf("%v is above its bin's edge %v", c.d, e)
		}
	}
}

// A once-only effect's writes are counted per worker: what the scoreboard
// calls credits.
func TestTallyCountsEffectsPerWorker(t *testing.T) {
	evs := check.Slice{
		{Worker: event.System, Kind: event.KindInit, Res: "credit", Code: check.LimitOnce},
		{Worker: 0, Kind: event.KindWrite, Res: "credit", OK: true, Has: event.HasOK},
		{Worker: 1, Kind: event.KindWrite, Res: "credit", OK: true, Has: event.HasOK},
		{Worker: 1, Kind: event.KindWrite, Res: "processed", OK: true, Has: event.HasOK},
		{Worker: 2, Kind: event.KindWrite, Res: "credit", OK: false, Has: event.HasOK},
	}
	tl := check.TallyOf(evs)
	for w, want := range []int{1, 1, 0} {
		if got := tl.Worker(w, check.WEffects); got != want {
			t.Errorf("w%02d effects %d, want %d", w, got, want)
		}
	}
}
