package timeline

import (
	"sort"
	"time"

	"github.com/locklab/locklab/themes"
)

// A lane's columns are drawn from summaries, not by walking its spans: a
// worker keeps, over its spans, the set of states (a bit mask) in blocks of
// 16, 256, 4096, … spans, so "which states occurred between two times" costs
// two binary searches and a few dozen ORs however long the log is.

const fan = 16

// every is the stride of a worker's sparse index of span times.
const every = 32

// stateIndex is the block summaries of one worker's spans.
type stateIndex struct {
	levels [][]uint16 // levels[L][j]: states of spans [j·16^(L+1), (j+1)·16^(L+1))
}

func bit(s themes.State) uint16 { return 1 << s }

// push adds span i (the newest) in state s. Level L exists once there
// are more spans than one block of level L−1 holds.
func (x *stateIndex) push(i int, s themes.State) {
	m := bit(s)
	for L, size := 0, fan; L == 0 || i >= size/fan; L, size = L+1, size*fan {
		if L == len(x.levels) {
			var first uint16 // a new level starts with the block below it
			if L > 0 {
				first = x.levels[L-1][0]
			}
			x.levels = append(x.levels, []uint16{first})
		}
		j := i / size
		for len(x.levels[L]) <= j {
			x.levels[L] = append(x.levels[L], 0)
		}
		x.levels[L][j] |= m
	}
}

// states returns the states of spans [a, b).
func (w *Worker) states(a, b int) uint16 {
	var m uint16
	spans := w.Spans
	// Single spans up to a block boundary on each side.
	for a < b && a%fan != 0 {
		m |= bit(spans[a].State)
		a++
	}
	for a < b && b%fan != 0 {
		b--
		m |= bit(spans[b].State)
	}
	size := fan
	for L := 0; a < b; L++ {
		lvl := w.index.levels[L]
		if L+1 >= len(w.index.levels) {
			for ; a < b; a += size {
				m |= lvl[a/size]
			}
			break
		}
		next := size * fan
		for a < b && a%next != 0 {
			m |= lvl[a/size]
			a += size
		}
		for a < b && b%next != 0 {
			b -= size
			m |= lvl[b/size]
		}
		size = next
	}
	return m
}

// Columns fills dst (one entry per column) with the set of states worker w
// was in during each column's time, as of cursor k, up to time now: column
// c covers [c·span/cols, (c+1)·span/cols). A column before the worker's first event
// or after its outcome (or its crash) is 0; the outcome counts in the
// column where it happened only. Each entry is a bit mask of themes.State.
func (tl *Timeline) Columns(dst []uint16, w, k int, now, span time.Duration) {
	for c := range dst {
		dst[c] = 0
	}
	spans := tl.SpansAt(w, k)
	cols := len(dst)
	if len(spans) == 0 || cols == 0 || span <= 0 {
		return
	}
	// Spans that start after now are not drawn.
	n := sort.Search(len(spans), func(i int) bool { return spans[i].T > now })
	if n == 0 {
		return
	}
	wk := &tl.Workers[w]
	col := func(t time.Duration) int { return min(max(int(int64(t)*int64(cols)/int64(span)), 0), cols-1) }
	first := col(spans[0].T)
	lastSp := spans[n-1]
	end := col(now)
	if lastSp.State == themes.DoneOK || lastSp.State == themes.DoneFail || lastSp.State == themes.Crashed {
		end = col(lastSp.T)
	}
	a := 0
	for c := first; c <= end; c++ {
		t1 := time.Duration(int64(span) * int64(c+1) / int64(cols))
		// b: the first span that starts at or after the column's end:
		// first among every 32nd span's time (a small array, in cache),
		// then among the 32.
		blk := sort.Search(len(wk.every), func(i int) bool { return wk.every[i] >= t1 })
		lo, hi := max((blk-1)*every, a), min(blk*every, n)
		b := lo // a short forward scan: the block's memory is contiguous
		for b < hi && spans[b].T < t1 {
			b++
		}
		if c == cols-1 || c == end {
			b = n
		}
		if b <= a {
			b = a + 1
		}
		dst[c] = wk.states(a, b)
		// The span active at the column's end starts the next column.
		a = b - 1
	}
}
