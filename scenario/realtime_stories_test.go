package scenario_test

import (
	"testing"

	"github.com/locklab/locklab/scenario"
)

// TestStoriesInRealTime tells the stories that keep real time and must
// not run beside the simulated ones, which take every core they are
// given: real time needs its margins, so these run before the package's
// parallel tests. They run beside each other, as they mostly wait: one
// after another, beside six busy loops, they took half a minute.
//
// trade-offs: on one seed, a holder that crashes keeps Redis' lock until
// its TTL lapses and Postgres' session lock not at all; a holder that
// pauses past its TTL lets a second worker into Redis' lock (its stale
// write lands), keeps Postgres' lock through the pause (the waiter gets in
// only after it), and loses etcd's lease but its stale write is fenced.
// The stories are chained by cues: a busy machine changes no outcome.
//
// redsync: Redlock's parts played by go-redsync's Mutex, and a node too
// slow for it; late-grant through the libraries; trade-offs' beats.
func TestStoriesInRealTime(t *testing.T) {
	for _, s := range []struct {
		name string
		tell func(*testing.T)
	}{
		{"trade-offs/servers", tradeOffsOnServers},
		{"trade-offs/without-postgres", tradeOffsWithoutPostgres},
		{"redlock-parts-with-redsync", redlockPartsWithRedsync},
		{"redsync-gives-up-on-a-slow-node", redsyncGivesUpOnASlowNode},
		{"late-grant-through-the-libraries", lateGrantThroughTheLibraries},
		{"trade-offs/beats", func(t *testing.T) {
			sc, _ := scenario.Lookup("trade-offs")
			beatsListed(t, sc, tradeParams()) // its pauses shortened, its beats the same
		}},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			s.tell(t)
		})
	}
}
