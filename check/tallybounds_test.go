package check

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
)

// stamped gives e the n-th place of a log: answered at n µs, sent 1 µs
// before.
func stamped(e event.Event, n int) event.Event {
	e.Seq, e.T = int64(n), time.Duration(n+1)*time.Microsecond
	return e.WithCall(e.T - time.Microsecond)
}

func lowerBounds(t *testing.T, reads, writes int) {
	r, w := maxReads, maxWrites
	maxReads, maxWrites = reads, writes
	t.Cleanup(func() { maxReads, maxWrites = r, w })
}

// Reads over every worker × resource, none written: the fold holds at
// most its bound of them, and when a write may rest on a read it let go,
// says the lost updates are unknown.
func TestTallyFoldHoldsBoundedReads(t *testing.T) {
	lowerBounds(t, 1000, 1000)
	f := NewTallyFold()
	most := 0
	for i := range 50000 {
		e := event.Event{Worker: int32(i % 500), Kind: event.KindRead, Res: "r" + strconv.Itoa(i/500%40)}.WithStock(int64(i))
		f.Add(stamped(e, i))
		most = max(most, f.Held())
	}
	if most > 2*1000+2*40+16 {
		t.Errorf("the fold held %d entries at most; its bound is 1000 reads per fold and checker", most)
	}
	if w := f.Tally().UntrackedWords(); len(w) > 0 {
		t.Errorf("reads never written leave every count known; the fold says %q", w)
	}
	f.Add(stamped(event.Event{Worker: 0, Kind: event.KindWrite, Res: "r39"}.WithStock(1).WithOK(true), 50000))
	if w := f.Tally().UntrackedWords(); !f.Tally().LostUnknown() || len(w) == 0 || w[0] != "lost updates: unknown (past 1,000 reads held)" {
		t.Errorf("past its bound the fold must call the lost updates unknown; it says %q", f.Tally().UntrackedWords())
	}
	// Under the bound nothing is unknown.
	g := NewTallyFold()
	for i := range 999 {
		g.Add(stamped(event.Event{Worker: int32(i % 500), Kind: event.KindRead, Res: "r" + strconv.Itoa(i/500)}.WithStock(1), i))
	}
	if g.Tally().LostUnknown() || len(g.Tally().UntrackedWords()) > 0 {
		t.Errorf("under its bound the fold says %q", g.Tally().UntrackedWords())
	}
}

// writesAfterOneRead is a read by worker 0, then n writes of the counter
// by others, and (follow) worker 0's write from its early read.
func writesAfterOneRead(n int, follow bool) []event.Event {
	evs := []event.Event{{Kind: event.KindInit, Res: "stock", Worker: event.System}}
	evs[0] = evs[0].WithStock(int64(n + 1))
	evs = append(evs, event.Event{Worker: 0, Kind: event.KindRead, Res: "stock"}.WithStock(int64(n+1)))
	for i := range n {
		evs = append(evs, event.Event{Worker: 1 + int32(i%99), Kind: event.KindWrite, Res: "stock"}.WithStock(int64(n-i)).WithOK(true))
	}
	if follow {
		evs = append(evs, event.Event{Worker: 0, Kind: event.KindWrite, Res: "stock"}.WithStock(int64(n)).WithOK(true))
	}
	for i := range evs {
		evs[i] = stamped(evs[i], i)
	}
	return evs
}

// Writes after one read never followed: the checker holds at most its
// bound of them, and every count is the one an unbounded fold gives.
func TestTallyFoldHoldsBoundedWrites(t *testing.T) {
	for _, follow := range []bool{false, true} {
		evs := writesAfterOneRead(20000, follow)
		want := TallyOf(Slice(evs))
		lowerBounds(t, 1000, 1000)
		f := NewTallyFold()
		most := 0
		for _, e := range evs {
			f.Add(e)
			most = max(most, f.Held())
		}
		if most > 1000+16 {
			t.Errorf("follow %v: the fold held %d entries at most; its bound is 1000 writes", follow, most)
		}
		got := f.Tally()
		for _, c := range []Counter{NLostUpdates, NStaleLanded, NViolations, NSold, NStaleUnknown, NLostUnknown} {
			if got.Get(c) != want.Get(c) {
				t.Errorf("follow %v: count %d is %d bounded, %d unbounded", follow, c, got.Get(c), want.Get(c))
			}
		}
		if follow && got.Get(NStaleLanded) != 1 {
			t.Errorf("the early read's write is stale: stale writes landed %d, want 1", got.Get(NStaleLanded))
		}
		maxReads, maxWrites = 1<<20, 1<<20
	}
}

// Writes nobody read before hold nothing, even under the default bounds.
func TestTallyFoldLetsGoOfWritesNoReadNeeds(t *testing.T) {
	f := NewTallyFold()
	for i := range 20000 {
		w := int32(i % 100)
		f.Add(stamped(event.Event{Worker: w, Kind: event.KindRead, Res: "stock"}.WithStock(int64(i)), 2*i))
		f.Add(stamped(event.Event{Worker: w, Kind: event.KindWrite, Res: "stock"}.WithStock(int64(i-1)).WithOK(true), 2*i+1))
		if h := f.Held(); h > 2*(16+100)+4 {
			t.Fatalf("after %d reads and writes the fold holds %d entries", i+1, h)
		}
	}
}

// Renewals never answered, each of its own token: at most maxRenewing
// tokens per worker (and the system) are held; a later renewal of a token let go makes
// the count a bound.
func TestTallyFoldHoldsBoundedRenewals(t *testing.T) {
	f := NewTallyFold()
	most := 0
	for i := range 50000 {
		f.Add(stamped(event.Event{Worker: int32(i%11) - 1, Kind: event.KindRenewFailed, Res: "lock", Token: "t" + strconv.Itoa(i),
			Outcome: event.OutcomeIndeterminate}, i))
		most = max(most, f.Held())
	}
	if most > 2*11*maxRenewing {
		t.Errorf("the fold held %d entries at most; its bound is %d tokens per worker", most, maxRenewing)
	}
	renew := OpKind("renew")
	if n := f.Tally().Unanswered(renew); n != 50000 {
		t.Errorf("unanswered renewals %d, want 50000", n)
	}
	// The last token (worker 3's) is held: its renewal settles it exactly.
	f.Add(stamped(event.Event{Worker: 3, Kind: event.KindRenewed, Res: "lock", Token: "t49999"}, 50000))
	if n := f.Tally().Unanswered(renew); n != 49999 || len(f.Tally().UntrackedWords()) > 0 {
		t.Errorf("unanswered renewals %d (%q), want 49999 and nothing untracked", n, f.Tally().UntrackedWords())
	}
	// The first was let go: its renewal leaves the count a bound.
	f.Add(stamped(event.Event{Worker: -1, Kind: event.KindRenewed, Res: "lock", Token: "t0"}, 50001))
	if w := f.Tally().UnansweredWords(); w != "at most 49999 renew(s)" {
		t.Errorf("unanswered %q, want at most 49999 renew(s)", w)
	}
}

// Derived events a log records with nothing to derive them: the
// rederiver holds a few, and still says where they first differ.
func TestRederiverHoldsBoundedDerivedEvents(t *testing.T) {
	f := NewTallyFold()
	for i := range 50000 {
		f.Add(stamped(event.Event{Worker: 1, Kind: event.KindViolation, Res: "A", Code: CodeOverlap}, i))
		if h := f.Held(); h > maxUnpaired+1 {
			t.Fatalf("after %d recorded violations the fold holds %d entries", i+1, h)
		}
	}
	if m := f.Mismatch(); !strings.Contains(m, "it records 50000 overlap event(s), its events show 0") {
		t.Errorf("mismatch %q", m)
	}
}

// A derived event recorded at another place than the events show, or one
// of a code the checker never derives: the first that differs is named.
func TestRederiverNamesTheFirstDerivedEventThatDiffers(t *testing.T) {
	enter := func(w int32) event.Event { return event.Event{Worker: w, Kind: event.KindWorkStart, Res: "A"} }
	overlap := event.Event{Worker: 1, Kind: event.KindViolation, Res: "A", Code: CodeOverlap}
	for _, c := range []struct {
		evs  []event.Event
		want string
	}{
		{[]event.Event{enter(0), overlap, enter(1)}, "it records a overlap by w01 on A after event 1 where its events show a overlap by w01 on A after event 2"},
		{[]event.Event{enter(0), enter(1), overlap}, ""},
		{[]event.Event{enter(0), {Worker: 0, Kind: event.KindViolation, Res: "A", Code: "made-up"}}, "it records a made-up by w00 on A after event 1 where its events show none"},
	} {
		r := NewRederiver()
		for _, e := range c.evs {
			r.Add(e, nil)
		}
		if m := r.Mismatch(); (c.want == "") != (m == "") || !strings.Contains(m, c.want) {
			t.Errorf("mismatch %q, want %q", m, c.want)
		}
	}
}

// A run whose counts passed the checker's bounds is not certified: its
// verdict is UNKNOWN, and Doubt makes the command exit 1.
func TestAnUntrackedRunIsInDoubt(t *testing.T) {
	s := &Summary{Verdict: "CORRECT", Untracked: []string{"lost updates: unknown (past 1,048,576 reads held)"}}
	s.untrackedVerdict()
	if !strings.HasPrefix(s.Verdict, "UNKNOWN — ") {
		t.Fatalf("verdict %q", s.Verdict)
	}
	if err := s.Doubt(); err == nil || !strings.Contains(err.Error(), "cannot be called correct") {
		t.Fatalf("Doubt: %v", err)
	}
	if err := (&Summary{Verdict: "CORRECT"}).Doubt(); err != nil {
		t.Fatalf("a correct run is in doubt: %v", err)
	}
}
