package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
)

// The short safety run tells a lock that lets a second holder in during a
// pause from one that fences it and from one a pause cannot lose, and
// "what to pick" ranks by it.
func TestSafetyRunTellsTheLocksApart(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := measureSafety(context.Background(), st, []string{"safe", "fenced", "flock"}, 200*time.Millisecond)
	by := map[string]Safety{}
	for _, s := range got {
		if s.Error != "" {
			t.Fatalf("%s: %s", s.Strategy, s.Error)
		}
		by[s.Strategy] = s
	}
	if s := by["safe"]; s.SecondHolderMS < 0 || s.Fences || s.DeadFreedMS < 0 || s.OneMachine {
		t.Errorf("safe: %+v; want a second holder during the pause, no fence, freed after a crash, a server", s)
	}
	if s := by["fenced"]; s.SecondHolderMS < 0 || !s.Fences || s.FenceNext <= s.FencePaused {
		t.Errorf("fenced: %+v; want a second holder with a larger fence", s)
	}
	if s := by["flock"]; s.SecondHolderMS >= 0 || !s.OneMachine || s.DeadFreedMS < 0 {
		t.Errorf("flock: %+v; want no second holder during the pause, one machine, freed after a crash", s)
	}
	r := &Report{Workers: []int{1}, Safety: got}
	var b strings.Builder
	r.WriteSafety(&b)
	r.WritePicks(&b, "safety")
	out := b.String()
	if !strings.Contains(out, "2nd holder after") || !strings.Contains(out, "survives: others waited") || !strings.Contains(out, "one machine only") {
		t.Errorf("the safety table lacks a measured fact:\n%s", out)
	}
	if !strings.Contains(out, "1. fenced") || strings.Index(out, ". safe ") < strings.Index(out, "1. fenced") {
		t.Errorf("for safety, fenced (a fence measured) should rank above safe:\n%s", out)
	}
	b.Reset()
	r.WritePicks(&b, "no-ttl")
	if !strings.Contains(b.String(), "1. flock") {
		t.Errorf("for no-ttl, flock (survived the pause, freed at once) should come first:\n%s", b.String())
	}
}
