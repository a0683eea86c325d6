package timeline

import (
	"math"
	"time"
)

// Marks on a lock lane, markers and overlaps on the time axis are drawn
// into columns from block summaries, not one by one: a list keeps, over
// blocks of 16, 256, 4096, … of its items, the earliest and latest start,
// the latest end, the latest seq an item ends at and the kinds in it. A
// block whose items all start in one column is drawn whole, so a frame
// visits a few blocks per column however long the list.

// item is one moment (End = T, EndSeq = Seq) or stretch of a list.
type item struct {
	seq, endSeq int64 // endSeq −1: still open
	t, end      time.Duration
	kind        uint8
}

// sumNode summarises a block of items.
type sumNode struct {
	minT, maxT, maxEnd time.Duration
	maxEndSeq          int64 // math.MaxInt64 when an item is still open
	kinds              uint32
}

func (n *sumNode) add(o sumNode) {
	n.minT, n.maxT = min(n.minT, o.minT), max(n.maxT, o.maxT)
	n.maxEnd, n.maxEndSeq = max(n.maxEnd, o.maxEnd), max(n.maxEndSeq, o.maxEndSeq)
	n.kinds |= o.kinds
}

func leaf(it item) sumNode {
	endSeq := it.endSeq
	if endSeq < 0 {
		endSeq = math.MaxInt64
	}
	return sumNode{minT: it.t, maxT: it.t, maxEnd: max(it.end, it.t), maxEndSeq: endSeq, kinds: 1 << it.kind}
}

var emptyNode = sumNode{minT: math.MaxInt64, maxT: math.MinInt64, maxEnd: math.MinInt64, maxEndSeq: math.MinInt64}

const sumFan = 16

// summaries is the block summaries of a list of n items.
type summaries struct {
	levels [][]sumNode // levels[L][j]: items [j·16^(L+1), (j+1)·16^(L+1))
	n      int
}

// push notes item i (the newest). Level L exists once there are more items
// than one block of level L−1 holds.
func (s *summaries) push(i int, it item) {
	s.n = i + 1
	lf := leaf(it)
	for L, size := 0, sumFan; L == 0 || i >= size/sumFan; L, size = L+1, size*sumFan {
		if L == len(s.levels) {
			first := emptyNode // a new level starts with the block below it
			if L > 0 {
				first = s.levels[L-1][0]
			}
			s.levels = append(s.levels, []sumNode{first})
		}
		j := i / size
		for len(s.levels[L]) <= j {
			s.levels[L] = append(s.levels[L], emptyNode)
		}
		s.levels[L][j].add(lf)
	}
}

// update notes that item i changed (an overlap closed): its blocks are
// summarised again from what they hold.
func (s *summaries) update(i int, at func(int) item) {
	for L, size := 0, sumFan; L < len(s.levels); L, size = L+1, size*sumFan {
		j := i / size
		nd := emptyNode
		if L == 0 {
			for x := j * size; x < min((j+1)*size, s.n); x++ {
				nd.add(leaf(at(x)))
			}
		} else {
			below := s.levels[L-1]
			for x := j * sumFan; x < min((j+1)*sumFan, len(below)); x++ {
				nd.add(below[x])
			}
		}
		s.levels[L][j] = nd
	}
}

// paint calls draw(c0, c1, kinds) for the columns the first n items cover
// as of cursor k, up to time now: a moment its own column, a stretch from
// its start's column to its end's (now while it is still open at k).
// Nothing that starts after now is drawn.
func (s *summaries) paint(n int, k int64, now time.Duration, col func(time.Duration) int, at func(int) item, draw func(c0, c1 int, kinds uint32)) {
	one := func(it item) {
		if it.t > now {
			return
		}
		end := now
		if it.endSeq >= 0 && it.endSeq <= k {
			end = min(it.end, now)
		}
		draw(col(it.t), col(max(end, it.t)), 1<<it.kind)
	}
	var visit func(L, j int)
	visit = func(L, j int) {
		size := 1
		for range L + 1 {
			size *= sumFan
		}
		a, b := j*size, min((j+1)*size, n)
		if a >= b {
			return
		}
		nd := s.levels[L][j]
		if b == (j+1)*size && nd.minT <= now && nd.maxT <= now {
			if c := col(nd.minT); c == col(nd.maxT) {
				end := now
				if nd.maxEndSeq <= k {
					end = min(nd.maxEnd, now)
				}
				draw(c, col(max(end, nd.minT)), nd.kinds)
				return
			}
		} else if b == (j+1)*size && nd.minT > now {
			return
		}
		if L == 0 {
			for i := a; i < b; i++ {
				one(at(i))
			}
			return
		}
		for x := j * sumFan; x < min((j+1)*sumFan, len(s.levels[L-1])); x++ {
			visit(L-1, x)
		}
	}
	if len(s.levels) == 0 {
		for i := range n {
			one(at(i))
		}
		return
	}
	top := len(s.levels) - 1
	for j := range s.levels[top] {
		visit(top, j)
	}
}

func markItem(m Mark) item {
	return item{seq: m.Seq, endSeq: m.Seq, t: m.T, end: m.T, kind: uint8(m.Kind)}
}

func markerItem(m Marker) item {
	return item{seq: m.Seq, endSeq: m.Seq, t: m.T, end: m.T, kind: uint8(m.Kind)}
}

func overlapItem(o Interval) item {
	return item{seq: o.Seq, endSeq: o.EndSeq, t: o.T, end: o.End}
}

// addMark appends a mark to l's lane.
func (l *Lock) addMark(m Mark) {
	l.sums.push(len(l.Marks), markItem(m))
	l.Marks = append(l.Marks, m)
}

// addMarker appends a marker.
func (tl *Timeline) addMarker(m Marker) {
	tl.markerSums.push(len(tl.Markers), markerItem(m))
	tl.Markers = append(tl.Markers, m)
}

// openOverlap appends an overlap still open; closeOverlap ends overlap i.
func (tl *Timeline) openOverlap(o Interval) {
	tl.overlapSums.push(len(tl.Overlaps), overlapItem(o))
	tl.Overlaps = append(tl.Overlaps, o)
}

func (tl *Timeline) closeOverlap(i int, seq int64, t time.Duration) {
	tl.Overlaps[i].EndSeq, tl.Overlaps[i].End = seq, t
	tl.overlapSums.update(i, func(x int) item { return overlapItem(tl.Overlaps[x]) })
}

// colOf is the column of t among cols over span.
func colOf(cols int, span time.Duration) func(time.Duration) int {
	return func(t time.Duration) int {
		return min(max(int(int64(t)*int64(cols)/int64(max(span, 1))), 0), cols-1)
	}
}

// MarkColumns fills dst (one entry per column over span) with the kinds of
// lock l's marks in each column, as of cursor k up to now: a bit mask of
// 1<<MarkKind. Its cost does not grow with the number of marks.
func (tl *Timeline) MarkColumns(dst []uint32, l *Lock, k int, now, span time.Duration) {
	clear(dst)
	if len(dst) == 0 {
		return
	}
	n := upTo(len(l.Marks), func(i int) int64 { return l.Marks[i].Seq }, int64(k))
	l.sums.paint(n, int64(k), now, colOf(len(dst), span), func(i int) item { return markItem(l.Marks[i]) },
		func(c0, _ int, kinds uint32) { dst[c0] |= kinds })
}

// MarkerColumns fills dst with the kinds of the markers in each column, as
// of cursor k up to now: a bit mask of 1<<MarkerKind.
func (tl *Timeline) MarkerColumns(dst []uint32, k int, now, span time.Duration) {
	clear(dst)
	if len(dst) == 0 {
		return
	}
	n := upTo(len(tl.Markers), func(i int) int64 { return tl.Markers[i].Seq }, int64(k))
	tl.markerSums.paint(n, int64(k), now, colOf(len(dst), span), func(i int) item { return markerItem(tl.Markers[i]) },
		func(c0, _ int, kinds uint32) { dst[c0] |= kinds })
}

// OverlapColumns sets dst[c] for each column in which two workers were in
// one critical section, as of cursor k up to now (one still open at k
// reaches now).
func (tl *Timeline) OverlapColumns(dst []bool, k int, now, span time.Duration) {
	clear(dst)
	if len(dst) == 0 {
		return
	}
	n := upTo(len(tl.Overlaps), func(i int) int64 { return tl.Overlaps[i].Seq }, int64(k))
	tl.overlapSums.paint(n, int64(k), now, colOf(len(dst), span), func(i int) item { return overlapItem(tl.Overlaps[i]) },
		func(c0, c1 int, _ uint32) {
			for c := c0; c <= c1; c++ {
				dst[c] = true
			}
		})
}
