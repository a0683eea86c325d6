package timeline_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// script builds a log from events at given virtual times (ms).
type script struct{ evs []event.Event }

func (s *script) at(ms int, w int32, k event.Kind, res string) *event.Event {
	s.evs = append(s.evs, event.Event{T: time.Duration(ms) * time.Millisecond, Worker: w, Kind: k, Res: res})
	return &s.evs[len(s.evs)-1]
}

func (s *script) log() *event.Log {
	l := event.NewLog(nil, nil)
	for _, e := range s.evs {
		l.Append(e)
	}
	return l
}

// ttlLapse: w0 holds lock:stock with a 100ms TTL but works 300ms; w1 gets in at 150ms.
func ttlLapse() *script {
	s := &script{}
	s.at(0, 0, event.KindAttempt, "lock:stock")
	a := s.at(1, 0, event.KindAcquired, "lock:stock")
	a.TTL = 100 * time.Millisecond
	s.at(1, 0, event.KindWorkStart, "stock")
	s.at(2, 1, event.KindAttempt, "lock:stock")
	s.at(3, 1, event.KindDenied, "lock:stock")
	s.at(3, 1, event.KindBackoff, "lock:stock").Delay = 147 * time.Millisecond
	s.at(150, 1, event.KindAttempt, "lock:stock")
	b := s.at(151, 1, event.KindAcquired, "lock:stock")
	b.TTL = 100 * time.Millisecond
	s.at(151, 1, event.KindWorkStart, "stock")
	return s
}

func TestLapseUnderWorkingHolder(t *testing.T) {
	s := ttlLapse()
	tl := timeline.New(2)
	tl.Catch(s.log())
	if len(tl.Locks) != 1 {
		t.Fatalf("%d locks", len(tl.Locks))
	}
	list, marks := tl.LockAt(tl.Locks[0], tl.N-1)
	spans := list.All()
	var lapse *timeline.Mark
	for i := range marks {
		if marks[i].Kind == timeline.MarkLapse {
			lapse = &marks[i]
		}
	}
	if lapse == nil || lapse.T != 101*time.Millisecond || lapse.Worker != 0 {
		t.Fatalf("no lapse mark at 101ms for w00: %+v", marks)
	}
	if last := spans[len(spans)-1]; last.Holder != 1 {
		t.Fatalf("holder at the end: %d", last.Holder)
	}
	if got := tl.StateAt(0, tl.N-1); got != themes.Critical {
		t.Fatalf("w00 state %v, want critical (still working)", got)
	}
	// Before the lapse, w01 waits for w00.
	if waits := tl.WaitsAt(5); waits[1] != 0 {
		t.Fatalf("waits at 5: %v", waits)
	}
	if waits := tl.WaitsAt(tl.N - 1); waits[1] != -1 {
		t.Fatalf("w01 still waits after acquiring: %v", waits)
	}
	if len(tl.MarkersAt(tl.N-1)) != 1 || len(tl.MarkersAt(3)) != 0 {
		t.Fatal("expiry marker wrong")
	}
	if n := len(tl.BackoffsAt(tl.N - 1)); n != 1 {
		t.Fatalf("%d backoffs", n)
	}
}

func TestPrefixesAreCursorExact(t *testing.T) {
	s := ttlLapse()
	log := s.log()
	full := timeline.New(2)
	full.Catch(log)
	for k := 0; k < log.Len(); k++ {
		part := timeline.New(2)
		for i := 0; i <= k; i++ {
			part.Fold(log.At(i))
		}
		for w := 0; w < 2; w++ {
			if a, b := full.StateAt(w, k), part.StateAt(w, k); a != b {
				t.Fatalf("cursor %d worker %d: prefix state %v, folded-to-k state %v", k, w, a, b)
			}
		}
	}
}

func TestCycle(t *testing.T) {
	if c := timeline.Cycle([]int32{1, 2, 3, 0}); len(c) != 4 {
		t.Fatalf("4-ring: %v", c)
	}
	if c := timeline.Cycle([]int32{1, -1, 1, 2}); c != nil {
		t.Fatalf("chain reported as cycle: %v", c)
	}
	if c := timeline.Cycle([]int32{-1, 2, 1}); len(c) != 2 {
		t.Fatalf("2-cycle: %v", c)
	}
}

func TestFoldsARealRun(t *testing.T) {
	st, err := store.Open(t.Context(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.Stock, p.Retry = 10, 3, "fixed"
	p.RetryBase = event.Millis(2 * time.Millisecond)
	r, err := scenario.Start(t.Context(), st, scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	tl := timeline.New(10)
	tl.Catch(r.Log)
	// How many sold depends on the machine's pace (a worker may give up
	// on a busy lock): the fold must agree with the run's own summary.
	_, sold := tl.StockAt(tl.N - 1)
	if want := r.Summary().Successes; sold != want || !tl.HasStock || tl.Initial != 3 {
		t.Fatalf("sold %d, the summary says %d", sold, want)
	}
	for w := range 10 {
		if s := tl.StateAt(w, tl.N-1); s != themes.DoneOK && s != themes.DoneFail {
			t.Fatalf("worker %d ends %v", w, s)
		}
	}
	if len(tl.Locks) != 1 || len(tl.Backoffs) == 0 {
		t.Fatalf("locks %d backoffs %d", len(tl.Locks), len(tl.Backoffs))
	}
}

// BenchmarkFold is folding one event into the view state.
func BenchmarkFold(b *testing.B) {
	s := &script{}
	for i := 0; i < 4096; i++ {
		w := int32(i % 64)
		switch i % 8 {
		case 0:
			s.at(i, w, event.KindAttempt, "lock:stock")
		case 1:
			s.at(i, w, event.KindDenied, "lock:stock")
		case 2:
			s.at(i, w, event.KindBackoff, "lock:stock").Delay = time.Millisecond
		case 3:
			s.at(i, w, event.KindAcquired, "lock:stock").TTL = time.Second
		case 4:
			s.at(i, w, event.KindWorkStart, "stock")
		case 5:
			s.at(i, w, event.KindRead, "stock")
		case 6:
			s.at(i, w, event.KindWorkEnd, "stock")
		case 7:
			s.at(i, w, event.KindRelease, "lock:stock")
		}
	}
	evs := s.evs
	tl := timeline.New(64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := evs[i&4095]
		e.T += time.Duration(i>>12) * 5 * time.Second
		tl.Fold(e)
		i++
	}
}

func TestLastVotes(t *testing.T) {
	s := &script{}
	vote := func(ms int, w int32, node int16, ok bool) {
		e := s.at(ms, w, event.KindVote, "lock:Q")
		e.Node, e.Has = node, event.HasNode
		*e = e.WithOK(ok)
	}
	for n := range int16(5) {
		vote(1, 0, n, n < 3) // w00: yes, yes, yes, no, no
	}
	for n := range int16(5) {
		vote(2, 1, n, n == 4) // w01: only node 4
	}
	tl := timeline.New(2)
	tl.Catch(s.log())
	got, who := tl.LastVotes(tl.Locks[0], 4)
	if who != 0 || fmt.Sprint(got) != "[1 1 1 2 2]" {
		t.Fatalf("after w00's attempt: %v by %d", got, who)
	}
	got, who = tl.LastVotes(tl.Locks[0], tl.N-1)
	if who != 1 || fmt.Sprint(got) != "[2 2 2 2 1]" {
		t.Fatalf("after w01's attempt: %v by %d", got, who)
	}
}

// TestColumnsAreEveryStateThatOccurred compares the per-column summaries
// with a walk over every span, on a long random history.
func TestColumnsAreEveryStateThatOccurred(t *testing.T) {
	kinds := []event.Kind{event.KindAttempt, event.KindDenied, event.KindBackoff, event.KindAcquired,
		event.KindWorkStart, event.KindWorkEnd, event.KindRelease, event.KindPause, event.KindResume}
	l := event.NewLog(nil, nil)
	at := time.Duration(0)
	for i := range 20_000 {
		at += time.Duration(i*7919%13) * time.Microsecond
		l.Append(event.Event{T: at, Worker: int32(i % 3), Kind: kinds[i*31%len(kinds)], Res: "lock:x"})
	}
	tl := timeline.New(3)
	tl.Catch(l)
	for _, k := range []int{10, 999, 4097, tl.N - 1} {
		now := l.At(k).T
		for _, cols := range []int{1, 7, 80, 150} {
			span := max(now, time.Millisecond)
			for w := range 3 {
				got := make([]uint16, cols)
				tl.Columns(got, w, k, now, span)
				want := make([]uint16, cols)
				spans := tl.SpansAt(w, k)
				col := func(t time.Duration) int { return min(int(int64(t)*int64(cols)/int64(span)), cols-1) }
				for i, sp := range spans {
					if sp.T > now {
						break
					}
					end := col(now)
					if i+1 < len(spans) && spans[i+1].T <= now {
						end = col(spans[i+1].T)
					}
					for c := col(sp.T); c <= end; c++ {
						want[c] |= 1 << sp.State
					}
				}
				for c := range want {
					if got[c] != want[c] {
						t.Fatalf("k %d, %d cols, w%d, column %d: states %b, want %b", k, cols, w, c, got[c], want[c])
					}
				}
			}
		}
	}
}
