package libs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// redsync's Mutex on five nodes, unmodified: each node's answer to its
// SET NX is a vote step of that node, the deletes that undo a refused
// acquire are undo steps, and a release is one step per node.
func TestRedsyncQuorumVotesNodeByNode(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Nodes: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var seen steps
	a, b := seen.lockers(t, "redsync-quorum", st)
	key := st.Key("lock:q")
	// Generous for a busy machine: redsync waits for each node 5% of it.
	la, err := a.TryAcquire(ctx, key, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, key, 4*time.Second); !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("a second holder got in: %v", err)
	}
	nodes := func(k lock.StepKind, f func(lock.Step) bool) map[int]bool {
		out := map[int]bool{}
		for _, s := range seen.of(k) {
			if f(s) {
				out[s.Node] = true
			}
		}
		return out
	}
	if got := nodes(lock.StepVote, func(s lock.Step) bool { return s.OK && s.Token == la.Token }); len(got) != 5 {
		t.Errorf("the holder's yes votes came from nodes %v: want all five", got)
	}
	if got := nodes(lock.StepVote, func(s lock.Step) bool { return !s.OK && s.Msg == "taken" && s.Token != la.Token }); len(got) != 5 {
		t.Errorf("the refused worker's votes said taken on nodes %v: want all five", got)
	}
	if got := nodes(lock.StepReleaseFailed, func(s lock.Step) bool { return s.Op == lock.OpUndo && s.Msg == "held by another owner" }); len(got) != 5 {
		t.Errorf("the library's undo after the refusal reached nodes %v: want all five, each another's key", got)
	}
	d := seen.of(lock.StepDenied)
	if len(d) != 1 || !strings.HasPrefix(d[0].Msg, "lock: not obtained: 0 of 5 nodes granted (quorum 3); redsync returned lock already taken") {
		t.Errorf("denied steps %+v: want the quorum in words and what redsync returned", d)
	}
	acq := seen.of(lock.StepAcquired)
	if len(acq) != 1 || acq[0].Node != -1 || acq[0].TTL <= 0 || acq[0].TTL >= 4*time.Second || la.Validity != acq[0].TTL {
		t.Errorf("acquired %+v, lease validity %v: want the validity redsync computed, below the TTL", acq, la.Validity)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := nodes(lock.StepRelease, func(s lock.Step) bool { return s.OK && s.Op == "" && s.Token == la.Token }); len(got) != 5 {
		t.Errorf("the release deleted the key on nodes %v: want all five, each its own step", got)
	}
}
