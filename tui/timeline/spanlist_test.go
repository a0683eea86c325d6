package timeline

import (
	"testing"
	"time"
)

// A span list over several chunks keeps every span in order; a prefix
// taken before more spans came stays as it was; the last is the latest.
func TestSpanListOverChunks(t *testing.T) {
	var s SpanList
	if s.last() != nil || s.Len() != 0 {
		t.Fatal("an empty list has a span")
	}
	const n = 2*spanChunk + 5
	var prefix SpanList
	for i := range n {
		s.add(LockSpan{Seq: int64(i), T: time.Duration(i), Holder: int32(i % 7)})
		if i == spanChunk {
			prefix = s.Upto(s.Len())
		}
		if s.last().Seq != int64(i) {
			t.Fatalf("after span %d the last is %d", i, s.last().Seq)
		}
	}
	s.last().Renewing = true
	all := s.All()
	if len(all) != n || !all[n-1].Renewing {
		t.Fatalf("%d spans, want %d, the last changed through last()", len(all), n)
	}
	for i, sp := range all {
		if sp.Seq != int64(i) || s.At(i) != sp {
			t.Fatalf("span %d is %+v", i, sp)
		}
	}
	if prefix.Len() != spanChunk+1 || prefix.At(spanChunk).Seq != spanChunk {
		t.Fatalf("the prefix holds %d spans", prefix.Len())
	}
}
