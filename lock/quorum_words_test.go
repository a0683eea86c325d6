package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A denied Redlock acquire says which nodes did not answer or refused with
// an error, apart from those that said the lock was taken; a denial by
// held votes alone keeps its short words.
func TestQuorumErrorNamesUnansweredVotes(t *testing.T) {
	for _, c := range []struct {
		nodes []NodeError
		want  string
	}{
		{[]NodeError{{1, errTaken}, {2, errTaken}, {3, errTaken}}, "lock: not obtained: 2 of 5 nodes granted (quorum 3)"},
		{[]NodeError{{1, errTaken}, {2, context.DeadlineExceeded}, {3, context.DeadlineExceeded}, {4, replyError("OOM command not allowed")}},
			"lock: not obtained: 1 of 5 nodes granted (quorum 3): 1 said taken, 2 did not answer, 1 failed"},
	} {
		e := &QuorumError{Granted: 5 - len(c.nodes), Quorum: 3, Nodes: c.nodes}
		if got := e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if !errors.Is(e, ErrNotObtained) || strings.Contains(e.Error(), "busy") {
			t.Errorf("%q: not a denial, or called busy", e.Error())
		}
	}
}

// replyError is a server's error reply, as go-redis gives one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}
