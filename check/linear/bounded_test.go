package linear

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/launch"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/scenario"
)

// longLog writes a log of about n events (a seeded oversell/safe run,
// repeated) to a file of the test's and returns its path.
func longLog(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.jsonl")
	runLog(t, one, "oversell", "safe", 1)
	in, err := os.Open(one)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rec, err := check.ReadRecording(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := writeRepeated(bw, rec, n); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runLog runs scenario sc under strategy at its defaults on the embedded
// store, with seed, and writes its event log to path.
func runLog(t testing.TB, path, sc, strategy string, seed uint64) {
	t.Helper()
	def, err := scenario.Lookup(sc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := scenario.Config{Scenario: sc, Strategy: strategy, Params: def.Defaults, Seed: seed, Tool: "test"}
	run, st, err := launch.Start(context.Background(), launch.Where{}, cfg, func() (io.Writer, error) { return f, nil })
	if err != nil {
		t.Fatalf("%s/%s: %v", sc, strategy, err)
	}
	defer st.Close()
	if err := run.Wait(); err != nil {
		t.Fatalf("%s/%s: %v", sc, strategy, err)
	}
}

// liveHeap is the heap in use once the garbage is collected.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// check reads a log once and holds a bounded part of it, however long:
// 300,000 events, with room for 16,384 operations, take less than 8 MB
// more than none (holding every history, without the bound, takes some
// 22 MB; the whole log as events would take over 30 MB more). The longest history, let go, is still
// judged as it streamed by: each operation at its return.
func TestCheckHoldsABoundedPartOfALongLog(t *testing.T) {
	path := longLog(t, 300_000)
	defer func(n int) { maxHeld = n }(maxHeld)
	maxHeld = 1 << 14

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := liveHeap()
	var c *historyChecker
	var most int64
	err = scenario.ReadEach(bufio.NewReader(f), func(h event.Header) { c = newHistoryChecker(h) }, func(e event.Event) {
		c.add(e)
		if c.events%50_000 == 0 {
			most = max(most, liveHeap()-base)
		}
		if c.full {
			t.Fatalf("event %d: the histories were given up", c.events)
		}
		if held := c.held + c.lease.held(); held > maxHeld {
			t.Fatalf("event %d: %d operations and entries held, more than the %d allowed", c.events, held, maxHeld)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	most = max(most, liveHeap()-base)
	t.Logf("%d events: the heap grew by %d KiB at most", c.events, most>>10)
	if most > 8<<20 {
		t.Errorf("the heap grew by %d MiB reading %d events: check holds the log", most>>20, c.events)
	}
	rep := c.judge(context.Background(), time.Now().Add(time.Minute), false)
	if len(rep.parts) != 3 {
		t.Fatalf("want the lease, register and section histories, got %+v", rep.parts)
	}
	for _, p := range rep.parts {
		if p.result == porcupine.Unknown && p.why == whyTimeout {
			continue // a busy machine: the judging is not what is tested
		}
		if p.result != porcupine.Ok {
			t.Errorf("%s %s (%d ops): %v (%s)", p.model, p.res, p.ops, p.result, p.why)
		}
	}
	if p := rep.parts[0]; p.result == porcupine.Ok && p.witness != "return" {
		t.Errorf("the lease history let go was judged at its %q", p.witness)
	}
}

// A search porcupine cannot finish (fifty identical writes, a read of a
// value nobody wrote) is stopped at the deadline, or when the user
// interrupts, and named as given up with the reason.
func TestCheckStopsASearchAtTheDeadline(t *testing.T) {
	t.Parallel()
	ops := []porcupine.Operation{{ClientId: 0, Input: regIn{"write", 5}, Call: 0, Output: int64(5), Return: 1}}
	for w := range 50 {
		c := int64(w + 1)
		ops = append(ops,
			porcupine.Operation{ClientId: w + 1, Input: regIn{"read", 0}, Call: 10 + c, Output: int64(5), Return: 200 + c},
			porcupine.Operation{ClientId: w + 1, Input: regIn{"write", 4}, Call: 150 + c, Output: int64(4), Return: 400 + c})
	}
	ops = append(ops, porcupine.Operation{ClientId: 0, Input: regIn{"read", 0}, Call: 1000, Output: int64(7), Return: 1000})
	for _, tc := range []struct {
		why    string
		cancel bool
	}{{whyTimeout, false}, {whyInterrupted, true}} {
		ctx, cancel := context.WithCancel(context.Background())
		deadline := time.Now().Add(200 * time.Millisecond)
		if tc.cancel {
			deadline = time.Now().Add(time.Hour)
			time.AfterFunc(200*time.Millisecond, cancel)
		}
		c := newHistoryChecker(event.Header{})
		for _, op := range ops {
			c.put("register", "stock", op)
		}
		rep := &Report{timeout: 200 * time.Millisecond, readUpTo: -1, fullAt: -1}
		j := &judge{ctx: ctx, deadline: deadline}
		stop := make(chan struct{})
		go j.watch(stop)
		for _, p := range c.done() {
			rep.parts = append(rep.parts, j.result(p))
		}
		close(stop)
		cancel()
		if len(rep.parts) != 1 || rep.parts[0].result != porcupine.Unknown || rep.parts[0].why != tc.why {
			t.Fatalf("want register stock given up (%s), got %+v", tc.why, rep.parts)
		}
		var out bytes.Buffer
		rep.printGaveUp(&out)
		if !strings.Contains(out.String(), "not checked: register stock (102 ops)") {
			t.Errorf("the verdict does not name what was not checked: %q", out.String())
		}
	}
}

// The histories given up for memory say so in one line: a log whose
// history holds more than check may keep, and no long one to let go.
func TestCheckGivesUpWhatItCannotHold(t *testing.T) {
	defer func(n int) { maxHeld = n }(maxHeld)
	maxHeld = 64
	c := newHistoryChecker(event.Header{Scenario: "oversell", Strategy: "safe"})
	for i := range 200 { // 200 lock keys, one acquire each
		e := event.Event{Seq: int64(i), T: time.Duration(i) * time.Millisecond, Kind: event.KindAcquired,
			Res: "lock:" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Token: "t", TTL: time.Second}
		c.add(e.WithCall(e.T))
	}
	rep := c.judge(context.Background(), time.Now().Add(time.Minute), false)
	var out bytes.Buffer
	rep.Print(&out)
	if rep.fullAt < 0 || !strings.Contains(out.String(), "gave up (memory)") || !strings.Contains(out.String(), "not checked: every resource's history") {
		t.Errorf("want the histories given up for memory, got:\n%s", out.String())
	}
}

// The witness stepped as the log streams by is the witness "each
// operation at its return" of the whole history: the same answer on the
// histories of runs linearizable and not, but where an operation is only
// known at the end (a Redlock release spread over its nodes): then it
// cannot tell, and never says linearizable.
func TestStreamedWitnessIsTheReturnWitness(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, run := range [][]string{
		{"oversell", "none"}, {"oversell", "safe"}, {"crash", "safe"}, {"ttl-expiry", "safe"}, {"naive-flaws", "naive"},
		{"deadlock", "safe"}, {"renewal", "watchdog"}, {"redlock", "redlock"}, {"webhook", "none"}, {"queue-double", "plain"},
	} {
		path := filepath.Join(dir, run[0]+"-"+run[1]+".jsonl")
		runLog(t, path, run[0], run[1], 3)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var c *historyChecker
		err = scenario.ReadEach(f, func(h event.Header) { c = newHistoryChecker(h) }, func(e event.Event) { c.add(e) })
		f.Close()
		if err != nil {
			t.Fatalf("%v: %v", run, err)
		}
		for _, p := range c.done() {
			ops := p.ops.all()
			order := make([]*porcupine.Operation, len(ops))
			for i := range ops {
				order[i] = &ops[i]
			}
			sort.SliceStable(order, func(a, b int) bool { return order[a].Return < order[b].Return })
			state, want := p.m.Init(), true
			for _, o := range order {
				if want, state = p.m.Step(state, o.Input, o.Output); !want {
					break
				}
			}
			inOrder, last := true, int64(0)
			for _, o := range ops {
				if o.Return < pending {
					inOrder, last = inOrder && o.Return >= last, max(last, o.Return)
				}
			}
			if got := p.sw.ok(p.m); got != want && (got || inOrder) {
				t.Errorf("%v: %s %s (%d ops, in the order of their returns: %v): streamed %v, sorted by return %v", run, p.model, p.res, p.n, inOrder, got, want)
			}
		}
	}
}
