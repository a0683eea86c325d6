package timeline

import (
	"sort"
	"time"
)

// timeIndex cuts a worker's time into at most maxBuckets buckets of 2^shift
// ns (the width doubles as the run grows) and keeps, per bucket, the first
// span that starts in it and the set of states of the spans that start in
// it, with coarser levels of fanT buckets above. A column of the lanes is
// then a bucket lookup for its edge and a few dozen ORs, whatever the
// length of the log.
type timeIndex struct {
	shift uint
	first []int32    // first[q]: index of the first span with T ≥ q<<shift
	open  []uint8    // open[q]: the state at bucket q's start (noState before the first span)
	masks [][]uint16 // masks[L][j]: states of the spans starting in buckets [j·fanT^L, (j+1)·fanT^L)
}

// noState is open's value before a worker's first span.
const noState = 0xff

const (
	maxBuckets = 4096
	fanT       = 8
	fanTBits   = 3
	minShift   = 10 // buckets of 1µs at first
)

func (x *timeIndex) bucket(t time.Duration) int {
	if t <= 0 {
		return 0
	}
	return int(uint64(t) >> x.shift)
}

// push notes span i, starting at t (never before the span before it), in
// state s; prev is the state of span i−1 (noState for the first).
func (x *timeIndex) push(i int, t time.Duration, s, prev uint8) {
	m := uint16(1) << s
	if len(x.masks) == 0 {
		x.shift = minShift
		x.masks = [][]uint16{nil}
	}
	// At most maxBuckets, and not many more than spans: an index larger
	// than its spans would cost a frame more cache than the spans do.
	limit := min(maxBuckets, 2*i+64)
	q := x.bucket(t)
	for q >= limit {
		x.widen()
		q = x.bucket(t)
	}
	for len(x.first) <= q {
		x.first = append(x.first, int32(i))
		x.open = append(x.open, prev)
		for L := range x.masks {
			if j := (len(x.first) - 1) >> (fanTBits * L); j >= len(x.masks[L]) {
				x.masks[L] = append(x.masks[L], 0)
			}
		}
		if top := x.masks[len(x.masks)-1]; len(top) > fanT {
			x.masks = append(x.masks, fold(top))
		}
	}
	for L := range x.masks {
		x.masks[L][q>>(fanTBits*L)] |= m
	}
}

// fold is the level above lvl.
func fold(lvl []uint16) []uint16 {
	up := make([]uint16, (len(lvl)+fanT-1)/fanT, maxBuckets/fanT)
	for j, m := range lvl {
		up[j/fanT] |= m
	}
	return up
}

// widen doubles the buckets' width.
func (x *timeIndex) widen() {
	x.shift++
	n := (len(x.first) + 1) / 2
	for q := 0; q < n; q++ {
		x.first[q] = x.first[2*q]
		x.open[q] = x.open[2*q]
	}
	x.first = x.first[:n]
	x.open = x.open[:n]
	base := x.masks[0]
	for q := 0; q < n; q++ {
		m := base[2*q]
		if 2*q+1 < len(base) {
			m |= base[2*q+1]
		}
		base[q] = m
	}
	x.masks = [][]uint16{base[:n]}
	for len(x.masks[len(x.masks)-1]) > fanT {
		x.masks = append(x.masks, fold(x.masks[len(x.masks)-1]))
	}
}

// firstAt returns the index of the first span with T ≥ t, among total spans.
func (w *Worker) firstAt(t time.Duration, total int) int {
	x := &w.tindex
	q := x.bucket(t)
	if q >= len(x.first) {
		return total
	}
	lo, hi := int(x.first[q]), total
	if q+1 < len(x.first) {
		hi = int(x.first[q+1])
	}
	spans := w.spans
	if hi-lo > 16 {
		return lo + sort.Search(hi-lo, func(i int) bool { return time.Duration(spans[lo+i]>>8) >= t })
	}
	for lo < hi && time.Duration(spans[lo]>>8) < t {
		lo++
	}
	return lo
}

// firstOf is the index of the first span of bucket q (total past the last).
func (x *timeIndex) firstOf(q, total int) int {
	if q < len(x.first) {
		return int(x.first[q])
	}
	return total
}

// buckets returns the states of the spans starting in buckets [a, b).
func (x *timeIndex) buckets(a, b int) uint16 {
	var m uint16
	for L := 0; a < b; L++ {
		lvl := x.masks[L]
		if L+1 >= len(x.masks) {
			for ; a < b; a++ {
				m |= lvl[a]
			}
			break
		}
		for a < b && a%fanT != 0 {
			m |= lvl[a]
			a++
		}
		for a < b && b%fanT != 0 {
			b--
			m |= lvl[b]
		}
		a, b = a/fanT, b/fanT
	}
	return m
}

// between returns the states of spans [a, b), where spans [a+1, b) are
// those that start in [t0, t1) (t1 < 0: no end) among the first n of
// total.
func (w *Worker) between(a, b int, t0, t1 time.Duration, n, total int) uint16 {
	if b-a <= 8 {
		var m uint16
		for _, sp := range w.spans[a:b] {
			m |= 1 << (sp & 0xff)
		}
		return m
	}
	x := &w.tindex
	qa := x.bucket(t0 - 1)
	if t0 > 0 {
		qa++ // the first bucket that starts at or after t0
	}
	qb := len(x.first)
	if t1 >= 0 {
		qb = min(qb, x.bucket(t1))
	}
	if n < total {
		qb = min(qb, x.bucket(w.t(n)))
	}
	if qa >= qb {
		return w.states(a, b)
	}
	return w.states(a, x.firstOf(qa, total)) | x.buckets(qa, qb) | w.states(x.firstOf(qb, total), b)
}
