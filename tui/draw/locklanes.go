package draw

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// GlyphLapse is the lock lane's mark of a TTL lapse under a working holder.
var GlyphLapse = themes.SymLapse.Rune()

// LockLanes renders one row per lock key: its holder over time (in the
// holder's colour), renewal ticks, a mark where a TTL lapsed under a
// working holder, then who holds it now and a TTL countdown bar.
// Each lock takes two rows; its columns line up with the swimlanes'.
func LockLanes(th *themes.Theme, tl *timeline.Timeline, k int, now time.Duration, width, labelW, rows int) []string {
	return lockLanesOver(th, tl, k, now, now, width, labelW, rows)
}

// lockLanesOver is LockLanes over a window of span (at least now), its
// columns lined up with LanesFocus's.
func lockLanesOver(th *themes.Theme, tl *timeline.Timeline, k int, now, span time.Duration, width, labelW, rows int) []string {
	return LockLanesOf(th, tl, tl.Locks, k, now, span, width, labelW, rows)
}

// LockLanesOf is lockLanesOver for the locks in order (all of the
// timeline's, in the order to draw them).
func LockLanesOf(th *themes.Theme, tl *timeline.Timeline, locks []*timeline.Lock, k int, now, span time.Duration, width, labelW, rows int) []string {
	var out []string
	cols := max(width-labelW-1, 1)
	sc := NewScale(max(span, now), cols)
	lk := lookOf(th)
	kinds := make([]uint32, cols)
	for _, l := range locks {
		if len(out)+2 > rows {
			break
		}
		holders, forever, cur := lockHolders(tl, l, k, now, sc, cols)
		markAt := lockMarks(tl, kinds, l, k, now, sc)
		info := th.Muted.Render("free")
		if cur.Holder != -1 {
			info = holderInfo(th, tl, k, l, cur, now, sc, markAt)
		}
		lane := th.Text.Render(fmt.Sprintf("%-*s", labelW, shortLock(l.Name, labelW))) + " " + lk.lockLane(holders, forever, markAt)
		out = append(out, lane, strings.Repeat(" ", labelW+1)+th.Muted.Render(l.Name+": ")+info+votesInfo(th, tl, l, k))
	}
	if hidden := len(locks) - len(out)/2; hidden > 0 && len(out) > 0 {
		out[len(out)-1] += th.Muted.Render(fmt.Sprintf("  (+%d more locks)", hidden))
	}
	return out
}

// lockHolders is who holds l in each column up to now (-1: nobody), and
// whether that holding has no TTL where the lock's keys have one; cur is
// the holding at now.
func lockHolders(tl *timeline.Timeline, l *timeline.Lock, k int, now time.Duration, sc Scale, cols int) (holders []int32, forever []bool, cur timeline.LockSpan) {
	spans, _ := tl.LockAt(l, k)
	holders = make([]int32, cols)
	forever = make([]bool, cols) // held with no TTL where the lock's keys have one
	for c := range holders {
		holders[c] = -1
	}
	// Column by column, from the spans active at each column's start
	// and end (binary searches): the cost does not grow with the log.
	n := sort.Search(spans.Len(), func(i int) bool { return spans.At(i).T > now })
	cur.Holder = -1
	if n > 0 {
		cur = spans.At(n - 1)
	}
	heldIn := func(sp timeline.LockSpan, t0 time.Duration) bool {
		// lapsed before anything said so, unless its holder's renewals go on
		return sp.Holder != -1 && (sp.TTL <= 0 || sp.Deadline >= t0 || sp.Renewing)
	}
	i0 := 0
	for c := 0; c < cols && n > 0; c++ {
		t0, t1 := colEnd(sc, c-1), min(colEnd(sc, c), now)
		if c == 0 {
			t0 = 0
		}
		if t0 > now {
			break
		}
		// The span active at the column's end, and the one at its start.
		i1 := i0 + sort.Search(n-i0, func(i int) bool { return spans.At(i0+i).T > t1 })
		if i1 == 0 {
			continue
		}
		// The latest holding in the column (held and free alternate:
		// a few steps back find it).
		for i := i1 - 1; i >= max(i0-1, 0, i1-32); i-- {
			if sp := spans.At(i); heldIn(sp, t0) {
				holders[c], forever[c] = sp.Holder, sp.Forever
				break
			}
		}
		i0 = i1
	}
	return holders, forever, cur
}

// lockMarks is the most telling mark of each column on l, from the
// timeline's per-column summaries (kinds, reused from lock to lock),
// whatever the number of marks.
func lockMarks(tl *timeline.Timeline, kinds []uint32, l *timeline.Lock, k int, now time.Duration, sc Scale) []timeline.MarkKind {
	markAt := make([]timeline.MarkKind, len(kinds))
	tl.MarkColumns(kinds, l, k, now, sc.span)
	for c, m := range kinds {
		for kind := timeline.MarkKind(0); m>>kind != 0; kind++ {
			if m&(1<<kind) != 0 && markRank[kind] >= markRank[markAt[c]] {
				markAt[c] = kind
			}
		}
	}
	return markAt
}

// lockLane draws a lock's lane: each holding in its holder's colour (no
// TTL in its own glyph), the marks over it, blanks where it is free.
func (lk *look) lockLane(holders []int32, forever []bool, markAt []timeline.MarkKind) string {
	var b strings.Builder
	cols := len(holders)
	for c := 0; c < cols; {
		if markAt[c] != 0 {
			b.WriteString(lk.mark(markSyms[markAt[c]]))
			c++
			continue
		}
		j := c
		for j < cols && holders[j] == holders[c] && forever[j] == forever[c] && markAt[j] == 0 {
			j++
		}
		switch {
		case holders[c] == -1:
			b.WriteString(strings.Repeat(" ", j-c))
		case forever[c]:
			b.WriteString(lk.syms[themes.SymHeldNoTTL].wrap(strings.Repeat(string(themes.SymHeldNoTTL.Rune()), j-c)))
		default:
			b.WriteString(lk.worker(int(holders[c])).wrap(strings.Repeat(string(themes.SymHeld.Rune()), j-c)))
		}
		c = j
	}
	return b.String()
}

// votesInfo is the last quorum's votes on l (for whom), empty when it
// has none.
func votesInfo(th *themes.Theme, tl *timeline.Timeline, l *timeline.Lock, k int) string {
	votes, who := tl.LastVotes(l, k)
	if votes == nil {
		return ""
	}
	var vb strings.Builder
	for _, v := range votes {
		switch v {
		case 1:
			vb.WriteString(th.Mark(themes.Symbol(themes.DoneOK), 0))
		case 2:
			vb.WriteString(th.Mark(themes.Symbol(themes.DoneFail), 0))
		default:
			vb.WriteString(th.Mark(themes.SymVoteNone, 0))
		}
	}
	return th.Muted.Render("  votes "+check.WorkerName(who)+" ") + vb.String()
}

// markRank decides which mark a column shows when several fall in it.
var markRank = map[timeline.MarkKind]int{0: 0, timeline.MarkRenewal: 1, timeline.MarkReleaseFailed: 2,
	timeline.MarkLost: 3, timeline.MarkExpired: 4, timeline.MarkForeignDelete: 5, timeline.MarkLapse: 6}

// markSyms are the lock marks' glyphs.
var markSyms = map[timeline.MarkKind]themes.Symbol{
	timeline.MarkRenewal: themes.SymRenewal, timeline.MarkLapse: themes.SymLapse,
	timeline.MarkExpired: themes.SymExpired, timeline.MarkForeignDelete: themes.SymForeign,
	timeline.MarkReleaseFailed: themes.SymRefused, timeline.MarkLost: themes.SymLost,
}

// ttlBarW is the width of a holding's TTL countdown bar.
const ttlBarW = 10

// holderInfo is "w03 ▕████░░░░▏ 1.20s" (the holder's lane's name: alice/2
// in a room), or the lapse under a working holder.
func holderInfo(th *themes.Theme, tl *timeline.Timeline, k int, l *timeline.Lock, sp timeline.LockSpan, now time.Duration, sc Scale, markAt []timeline.MarkKind) string {
	if sp.Holder == timeline.Unknown {
		return th.Warn.Render("held — no acquire in the log says by whom")
	}
	who := th.Worker(int(sp.Holder)).Render(laneName(tl, int(sp.Holder)))
	if int(sp.Holder) < len(tl.Workers) && tl.StateAt(int(sp.Holder), k) == themes.Crashed {
		who += th.Muted.Render(" (crashed)")
	}
	switch {
	case sp.Forever:
		return who + " " + th.Alarm.Render("∞ no TTL: never expires")
	case sp.TTL <= 0:
		return who + " " + th.Muted.Render(noTTL(tl, l.Name))
	}
	left := sp.Deadline - now
	if left <= 0 && sp.Renewing {
		// Its holder renews it and nothing says the renewals stopped: the
		// next one is not back yet.
		return who + " " + th.Muted.Render(strings.Repeat("░", ttlBarW)) + " " + th.Warn.Render("renewal overdue")
	}
	if left <= 0 {
		if int(sp.Holder) < len(tl.Workers) && tl.StateAt(int(sp.Holder), k) == themes.Critical {
			markAt[sc.col(sp.Deadline)] = timeline.MarkLapse
			return who + " " + th.Lapse.Render("TTL LAPSED, still working")
		}
		return who + " " + th.Warn.Render("expired")
	}
	filled := int(int64(ttlBarW) * int64(left) / int64(sp.TTL))
	filled = min(max(filled, 0), ttlBarW)
	bar := th.States[themes.Holding].Render(strings.Repeat("█", filled)) + th.Muted.Render(strings.Repeat("░", ttlBarW-filled))
	fence := ""
	if sp.Fence > 0 {
		fence = th.Muted.Render(fmt.Sprintf(" #%d", sp.Fence))
	}
	return who + " " + bar + " " + Dur(left) + fence
}

// noTTL says what ends a holding without a TTL bar, from what the lock is.
func noTTL(tl *timeline.Timeline, name string) string {
	t, ok := tl.TraitsOf(name)
	switch {
	case ok && t.Expiry == trait.ExpirySession:
		return "no TTL: freed at release or when its session ends"
	case ok && t.Expiry == trait.ExpiryProcess:
		return "no TTL: freed at release or when its process exits"
	case ok && t.HasTTL():
		return "TTL not in the log"
	}
	return "no TTL"
}

// shortLock trims a lock key for the label column: lock:stock → stock.
func shortLock(name string, w int) string {
	name = strings.TrimPrefix(name, "lock:")
	if len(name) > w {
		return name[:w]
	}
	return name
}

// LabelWidth is the width of the lane labels, shared by workers and locks;
// folded lanes carry their count ("w03×12").
func LabelWidth(tl *timeline.Timeline, laneRows int) int {
	w := 4
	if len(tl.Workers) > 100 {
		w = 5
	}
	folds := len(tl.Workers) > laneRows
	if folds { // a folded row lists its members: w01,w07+3
		w = max(w+1+len(fmt.Sprint(len(tl.Workers))), 9)
	}
	for _, l := range tl.Locks {
		w = max(w, min(len(strings.TrimPrefix(l.Name, "lock:")), 10))
	}
	for _, n := range tl.Names {
		longest := len([]rune(n))
		if folds {
			longest += 3 // alice/1+7
		}
		w = max(w, min(longest, 14))
	}
	return w
}

// colEnd is the time at the right edge of column c.
func colEnd(s Scale, c int) time.Duration {
	return time.Duration(int64(s.span) * int64(c+1) / int64(s.cols))
}
