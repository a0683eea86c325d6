package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/tui/draw"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// viewAt is the mono view of a recorded log at cursor k, w×h (h with the footer).
func viewAt(t *testing.T, v *runView, k, w, h int) string {
	t.Helper()
	v.follow, v.paused, v.cursor = false, true, k
	v.playT = v.eventT(k)
	v.status = ""
	return v.View(themes.Mono(), w, h-1)
}

// nthMarker is the seq of the n-th marker of kind (from 0).
func nthMarker(t *testing.T, tl *timeline.Timeline, kind timeline.MarkerKind, n int) int {
	t.Helper()
	for _, m := range tl.Markers {
		if m.Kind == kind {
			if n == 0 {
				return int(m.Seq)
			}
			n--
		}
	}
	t.Fatalf("no marker %d of kind %d", n, kind)
	return 0
}

func TestGoldenNaiveLockWithNoTTL(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "naive-flaws-naive.jsonl")
		got := viewAt(t, v, v.tl.N-1, sz[0], sz[1])
		for _, want := range []string{"w00 (crashed) ∞ no TTL", string(themes.SymHeldNoTTL.Rune())} {
			if !strings.Contains(got, want) {
				t.Errorf("%dx%d: %q missing:\n%s", sz[0], sz[1], want, got)
			}
		}
		golden(t, fmt.Sprintf("naive-flaws-naive-%dx%d", sz[0], sz[1]), got)
	}
}

func TestGoldenTTLExpiryOverlapSharesAColumn(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "ttl-expiry-safe.jsonl")
		k := v.tl.N - 1
		got := viewAt(t, v, k, sz[0], sz[1])
		// w01's short critical section is in the same column as w00's
		// long one, and the axis marks that column.
		lines := strings.Split(got, "\n")
		row := func(name string) []rune {
			for _, l := range lines {
				if i := strings.Index(l, "│"+name); i >= 0 {
					return []rune(l[i:])
				}
			}
			t.Fatalf("%dx%d: no lane %s:\n%s", sz[0], sz[1], name, got)
			return nil
		}
		w0, w1 := row("w00"), row("w01")
		var axis []rune
		for _, l := range lines {
			if strings.Contains(l, "0─") {
				axis = []rune(l[strings.Index(l, "│"):])
				break
			}
		}
		shared := false
		for c := range min(len(w0), len(w1), len(axis)) {
			if (w0[c] == '█' || w0[c] == '✖') && (w1[c] == '█' || w1[c] == '✖') &&
				(axis[c] == themes.SymOverlap.Rune() || axis[c] == themes.Glyphs[themes.Violation]) {
				shared = true
			}
		}
		if !shared {
			t.Errorf("%dx%d: no column with both in the critical section, marked on the axis:\n%s", sz[0], sz[1], got)
		}
		golden(t, fmt.Sprintf("ttl-expiry-safe-%dx%d", sz[0], sz[1]), got)
	}
}

func TestGoldenCrashGlyph(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "crash.jsonl")
		got := viewAt(t, v, v.tl.N-1, sz[0], sz[1])
		if !strings.Contains(got, "w00 "+string(themes.Glyphs[themes.Crashed])) && !strings.Contains(got, string(themes.Glyphs[themes.Crashed])) {
			t.Errorf("%dx%d: no crash glyph:\n%s", sz[0], sz[1], got)
		}
		golden(t, fmt.Sprintf("crash-%dx%d", sz[0], sz[1]), got)
	}
}

func TestGoldenRetryFixedIsOneBar(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "retry-fixed.jsonl")
		got := viewAt(t, v, v.tl.N-1, sz[0], sz[1])
		if !strings.Contains(got, "100–200ms") {
			t.Errorf("%dx%d: no 100–200ms bin:\n%s", sz[0], sz[1], got)
		}
		golden(t, fmt.Sprintf("retry-fixed-%dx%d", sz[0], sz[1]), got)
	}
	var hc draw.HistCache
	v := loadView(t, "retry-fixed.jsonl")
	bars := 0
	for _, l := range draw.Histogram(&hc, themes.Mono(), v.tl, v.tl.N-1, 42, 12)[1:] {
		if strings.Contains(l, "█") {
			bars++
			if !strings.Contains(l, "100–200ms") {
				t.Errorf("a bar outside 100–200ms: %q", l)
			}
		}
	}
	if bars != 1 {
		t.Errorf("%d bars for a fixed 100ms delay, want 1", bars)
	}
}

func TestGoldenRedlockNodesAtTheClockJump(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		v := loadView(t, "redlock.jsonl")
		// Part 2: node 2's clock jumps; the second violation is its two holders.
		k := nthMarker(t, v.tl, timeline.MarkerViolation, 0)
		got := viewAt(t, v, k, sz[0], sz[1])
		for _, want := range []string{"node 2 · clock +1.00s", "held by w0"} {
			if !strings.Contains(got, want) {
				t.Errorf("%dx%d: %q missing:\n%s", sz[0], sz[1], want, got)
			}
		}
		golden(t, fmt.Sprintf("redlock-clock-jump-%dx%d", sz[0], sz[1]), got)
	}
}

// runDefault runs a scenario's default strategy on the embedded store,
// fast, and returns its log.
func runDefault(t *testing.T, sc *scenario.Scenario) (*scenario.Loaded, error) {
	st, err := store.Open(context.Background(), store.Config{Nodes: sc.Defaults.Nodes, PoolSize: 64, Speed: 10})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: sc.Name, Strategy: sc.Strategies[0], Params: sc.Defaults, Seed: 1})
	if err != nil {
		return nil, err
	}
	if err := r.Wait(); err != nil {
		return nil, err
	}
	return &scenario.Loaded{Header: r.Header, Log: r.Log}, nil
}

// TestEveryViolationHasACell: in every scenario's default run, at the
// cursor of each violation, the violating worker's lane shows it, at 80
// and 160 columns; and the stock gauge is never "ok" while the checker has
// found a violation.
func TestEveryViolationHasACell(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every scenario")
	}
	for _, sc := range scenario.Catalogue() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel() // each its own store; the runs mostly sleep on the clock
			l, err := runDefault(t, sc)
			if err != nil {
				t.Fatal(err)
			}
			v := newRunView(replaySession(sc.Name, l), 1)
			_, derived := check.Check(l.Log)
			checked := 0
			for _, e := range derived {
				if e.Kind == event.KindViolation {
					checked++
				}
			}
			if got := v.tl.ViolationsAt(v.tl.N - 1); got != checked {
				t.Errorf("the timeline has %d violations, the checker %d", got, checked)
			}
			th := themes.Mono()
			for i := range l.Log.Len() {
				e := l.Log.At(i)
				if e.Kind != event.KindViolation {
					continue
				}
				if v.tl.HasStock && strings.HasSuffix(strings.Join(draw.Gauge(th, v.tl, i, 42), ""), th.OK.Render("ok")) {
					t.Errorf("event %d: the gauge says ok at a violation", i)
				}
				if e.Worker < 0 {
					continue
				}
				for _, width := range []int{78, 158} {
					sc := draw.NewScale(e.T, width-8)
					cells := draw.LaneCells(nil, make([]uint16, sc.Cols()), v.tl, int(e.Worker), i, sc, e.T)
					if !slices.Contains(cells, themes.Violation) {
						t.Errorf("event %d (%s, %s): no violation cell on %s's lane at %d columns", i, e.Code, e.Msg, check.WorkerName(e.Worker), width)
					}
				}
			}
		})
	}
}
