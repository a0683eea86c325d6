package timeline

// SpanList is a lock's holdings in log order, kept in chunks of spanChunk:
// growing it never copies what it holds, so a long replay never holds a
// lock's history twice while it grows (a 16M-event log's is some 190 MB).
// A prefix (Upto) shares its chunks.
type SpanList struct {
	chunks [][]LockSpan
	n      int
}

const (
	spanChunkBits = 12
	spanChunk     = 1 << spanChunkBits
)

// Len is how many spans the list holds.
func (s SpanList) Len() int { return s.n }

// At is span i (i < Len).
func (s SpanList) At(i int) LockSpan { return s.chunks[i>>spanChunkBits][i&(spanChunk-1)] }

// Upto is the list of its first n spans (n ≤ Len).
func (s SpanList) Upto(n int) SpanList { return SpanList{s.chunks, n} }

// Last is the latest span, or nil when there is none.
func (s *SpanList) last() *LockSpan {
	if s.n == 0 {
		return nil
	}
	i := s.n - 1
	return &s.chunks[i>>spanChunkBits][i&(spanChunk-1)]
}

// add appends sp.
func (s *SpanList) add(sp LockSpan) {
	if s.n&(spanChunk-1) == 0 && s.n>>spanChunkBits == len(s.chunks) {
		s.chunks = append(s.chunks, make([]LockSpan, spanChunk))
	}
	s.chunks[s.n>>spanChunkBits][s.n&(spanChunk-1)] = sp
	s.n++
}

// All is a copy of the spans, in one slice.
func (s SpanList) All() []LockSpan {
	out := make([]LockSpan, s.n)
	for i := range out {
		out[i] = s.At(i)
	}
	return out
}
