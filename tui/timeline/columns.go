package timeline

import (
	"math"
	"time"

	"github.com/locklab/locklab/themes"
)

// A lane's columns are drawn from summaries, not by walking its spans: a
// worker keeps, over its spans, the set of states (a bit mask) in blocks of
// 16, 256, 4096, … spans, so "which states occurred between two times" costs
// two binary searches and a few dozen ORs however long the log is.

const fan = 16

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
	spans := w.spans
	// Single spans up to a block boundary on each side.
	for a < b && a%fan != 0 {
		m |= 1 << (spans[a] & 0xff)
		a++
	}
	for a < b && b%fan != 0 {
		b--
		m |= 1 << (spans[b] & 0xff)
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
// c covers the times t with ⌊t·cols/span⌋ = c (the last column also what
// lies beyond). A column before the worker's first event or after its
// outcome (or its crash) is 0; the outcome counts in the column where it
// happened only. Each entry is a bit mask of themes.State. The cost is a
// bucket lookup and a few dozen ORs per column, whatever the log's length.
func (tl *Timeline) Columns(dst []uint16, w, k int, now, span time.Duration) {
	for c := range dst {
		dst[c] = 0
	}
	cols := len(dst)
	if w < 0 || w >= len(tl.Workers) || cols == 0 || span <= 0 {
		return
	}
	wk := &tl.Workers[w]
	total := len(wk.spans)
	// Spans after cursor k, and those that start after now, are not drawn.
	n := min(wk.upTo(k), wk.firstAt(now+1, total))
	if n == 0 {
		return
	}
	col := func(t time.Duration) int { return min(max(int(int64(t)*int64(cols)/int64(span)), 0), cols-1) }
	// The first time in column c is ⌈c·span/cols⌉: kept as a quotient
	// and a remainder of c·span + cols − 1 by cols, stepped column by
	// column (a division per column costs more than the rest).
	step, stepRem := int64(span)/int64(cols), int64(span)%int64(cols)
	startOf := func(c int) (q, r int64) {
		n := int64(c)*int64(span) + int64(cols) - 1
		return n / int64(cols), n % int64(cols)
	}
	first := col(wk.t(0))
	end := col(now)
	if last := wk.st(n - 1); last == themes.DoneOK || last == themes.DoneFail || last == themes.Crashed {
		end = col(wk.t(n - 1))
	}
	if tl.Grain(w, span, cols) > 0 {
		wk.bucketColumns(dst, n, total, first, end, span)
		return
	}
	a := 0
	q, r := startOf(first)
	for c := first; c <= end; c++ {
		t0, t1 := time.Duration(q), time.Duration(-1)
		q, r = q+step, r+stepRem
		if r >= int64(cols) {
			q, r = q+1, r-int64(cols)
		}
		// b: the first span that starts in a later column.
		b := n
		if c < end && c < cols-1 {
			t1 = time.Duration(q)
			b = min(wk.firstAt(t1, total), n)
		}
		if b <= a {
			b = a + 1
		}
		dst[c] = wk.between(a, b, t0, t1, n, total)
		// The span active at the column's end starts the next column.
		a = b - 1
	}
}

// grainCols is how many of a worker's time buckets a column must hold
// before its lane is drawn from the buckets alone.
const grainCols = 16

// Grain is the width of worker w's time buckets when Columns draws its
// lane at this scale from the buckets alone, else 0 (drawn span by span at
// the columns' edges). From buckets, a span counts in the column where its
// bucket starts (never before the worker's first column): at most a
// sixteenth of a column early, and no span's memory is read but those of
// one bucket at the cursor.
func (tl *Timeline) Grain(w int, span time.Duration, cols int) time.Duration {
	if w < 0 || w >= len(tl.Workers) || cols <= 0 {
		return 0
	}
	shift := tl.Workers[w].tindex.shift
	if len(tl.Workers[w].tindex.first) == 0 || int64(span)>>shift < int64(cols)*grainCols {
		return 0
	}
	return time.Duration(1) << shift
}

// bucketColumns is Columns from the time buckets: column c holds the
// buckets that start in it, and the state open at the first one's start.
// Spans [0, n) count, of total; first and end are the worker's first and
// last columns.
func (wk *Worker) bucketColumns(dst []uint16, n, total, first, end int, span time.Duration) {
	x := &wk.tindex
	cols := int64(len(dst))
	lim := len(x.first) // buckets [0, lim) hold only spans before n
	var cut uint16      // the states of bucket lim's spans before n
	if n < total {
		lim = x.bucket(wk.t(n))
		for i := x.firstOf(lim, total); i < n; i++ {
			cut |= bit(wk.st(i))
		}
	}
	last := uint8(wk.st(n - 1))
	qa := x.bucket(wk.t(0))
	for c := first; c <= end; c++ {
		qb := math.MaxInt // the last column takes what is left
		if c < end {
			// The first bucket at or after the next column's start.
			t1 := (int64(c+1)*int64(span) + cols - 1) / cols
			qb = max(int((t1+1<<x.shift-1)>>x.shift), qa)
		}
		open := last
		if qa <= lim && qa < len(x.open) {
			open = x.open[qa]
		}
		var m uint16
		if open != noState {
			m = 1 << open
		}
		if hi := min(qb, lim); qa < hi {
			m |= x.buckets(qa, hi)
		}
		if qa <= lim && lim < qb {
			m |= cut
		}
		dst[c] = m
		qa = qb
	}
}
