package timeline

import (
	"sort"

	"github.com/locklab/locklab/themes"
)

// The state as of cursor k: every history is a prefix up to event k.

// upTo returns how many entries of a seq-ordered history are at or before k.
func upTo(n int, seq func(i int) int64, k int64) int {
	return sort.Search(n, func(i int) bool { return seq(i) > k })
}

// SpansAt returns worker w's spans as of cursor k (a copy).
func (tl *Timeline) SpansAt(w, k int) []Span {
	wk := &tl.Workers[w]
	out := make([]Span, wk.upTo(k))
	for i := range out {
		out[i] = wk.span(i)
	}
	return out
}

// LockAt returns lock l's spans and marks as of cursor k.
func (tl *Timeline) LockAt(l *Lock, k int) (SpanList, []Mark) {
	s, m := l.Spans, l.Marks
	return s.Upto(upTo(s.Len(), func(i int) int64 { return s.At(i).Seq }, int64(k))),
		m[:upTo(len(m), func(i int) int64 { return m[i].Seq }, int64(k))]
}

// LastVotes returns the votes of the latest Redlock attempt on l as of
// cursor k, indexed by node (0: no answer yet, 1: yes, 2: no), and who asked.
func (tl *Timeline) LastVotes(l *Lock, k int) ([]uint8, int32) {
	v := l.Votes[:upTo(len(l.Votes), func(i int) int64 { return l.Votes[i].Seq }, int64(k))]
	if len(v) == 0 {
		return nil, -1
	}
	who := v[len(v)-1].Worker
	nodes := 0
	for _, x := range l.Votes {
		nodes = max(nodes, int(x.Node)+1)
	}
	out := make([]uint8, nodes)
	for i := len(v) - 1; i >= 0 && v[i].Worker == who; i-- {
		if out[v[i].Node] != 0 {
			break // an earlier attempt
		}
		out[v[i].Node] = 2
		if v[i].OK {
			out[v[i].Node] = 1
		}
	}
	return out, who
}

// StockAt returns the stock history as of cursor k and the sales so far.
func (tl *Timeline) StockAt(k int) ([]Point, int) {
	p := tl.Stock[:upTo(len(tl.Stock), func(i int) int64 { return tl.Stock[i].Seq }, int64(k))]
	return p, upTo(len(tl.Sales), func(i int) int64 { return tl.Sales[i] }, int64(k))
}

// BackoffsAt returns the backoffs as of cursor k.
func (tl *Timeline) BackoffsAt(k int) []Delay {
	return tl.Backoffs[:upTo(len(tl.Backoffs), func(i int) int64 { return tl.Backoffs[i].Seq }, int64(k))]
}

// MarkersAt returns the markers as of cursor k.
func (tl *Timeline) MarkersAt(k int) []Marker {
	return tl.Markers[:upTo(len(tl.Markers), func(i int) int64 { return tl.Markers[i].Seq }, int64(k))]
}

// WaitsAt returns, for each worker, whom it waits for at cursor k (−1: nobody).
// It starts from the nearest snapshot (one every 4096 edges, made as the
// edges are folded), so its cost does not grow with the log, and it
// changes nothing: views may ask it side by side.
func (tl *Timeline) WaitsAt(k int) []int32 {
	n := upTo(len(tl.Edges), func(i int) int64 { return tl.Edges[i].Seq }, int64(k))
	from := min(n/snapEvery, len(tl.waitSnaps)) * snapEvery
	return tl.applyEdges(tl.snapAt(from), from, n)
}

// addEdge adds a change of the wait-for graph, and a snapshot of the
// waits after every snapEvery of them.
func (tl *Timeline) addEdge(e Edge) {
	tl.Edges = append(tl.Edges, e)
	if n := len(tl.Edges); n%snapEvery == 0 {
		at := n - snapEvery
		tl.waitSnaps = append(tl.waitSnaps, tl.applyEdges(tl.snapAt(at), at, n))
	}
}

// Look makes dst a look at tl's histories under lane names of its own
// (nil: tl's): it shares everything else with tl, so it is read only,
// and valid until tl folds its next event. Views of one fold each draw
// through their own look, side by side.
func (tl *Timeline) Look(dst *Timeline, names []string) {
	*dst = *tl
	if names != nil {
		dst.Names = names
	}
}

const snapEvery = 4096

// snapAt is a copy of the waits after the first at edges (at a multiple
// of snapEvery).
func (tl *Timeline) snapAt(at int) []int32 {
	waits := make([]int32, len(tl.Workers))
	for i := range waits {
		waits[i] = -1
	}
	if at > 0 {
		copy(waits, tl.waitSnaps[at/snapEvery-1])
	}
	return waits
}

func (tl *Timeline) applyEdges(waits []int32, from, to int) []int32 {
	for _, e := range tl.Edges[from:to] {
		if e.From >= 0 && int(e.From) < len(waits) {
			waits[e.From] = e.To
		}
	}
	return waits
}

// Cycle returns a wait-for cycle in waits (each worker waits for at most
// one other), or nil.
func Cycle(waits []int32) []int32 {
	state := make([]uint8, len(waits)) // 0 new, 1 on path, 2 done
	for s := range waits {
		if state[s] != 0 {
			continue
		}
		var path []int32
		for v := int32(s); v >= 0 && int(v) < len(waits); v = waits[v] {
			if state[v] == 1 {
				for i, p := range path {
					if p == v {
						return append([]int32(nil), path[i:]...)
					}
				}
			}
			if state[v] == 2 {
				break
			}
			state[v] = 1
			path = append(path, v)
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	return nil
}

// StateAt returns worker w's state at cursor k.
func (tl *Timeline) StateAt(w, k int) themes.State {
	wk := &tl.Workers[w]
	n := wk.upTo(k)
	if n == 0 {
		return themes.Idle
	}
	return wk.st(n - 1)
}
