package linear

import (
	"testing"

	_ "github.com/locklab/locklab/lock/all" // the traits of every strategy

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
)

// The lease model reads what each lock is from its traits: this is what
// it must read for every strategy in the registry, and for trade-offs' one
// lock per store.
func TestLeaseTraitsComeFromTheRegistry(t *testing.T) {
	want := map[string]lockTraits{
		"naive":         {anyDel: true},
		"etcd":          {keepAlive: true, waiters: true},
		"pg-table":      {keepAlive: true},
		"memcached-add": {keepAlive: true, early: 1e6},
		"flock":         {noTTL: true}, "semaphore": {noTTL: true}, "pg-advisory": {noTTL: true},
		"pg-advisory-xact": {noTTL: true}, "pg-row": {noTTL: true}, "mysql-get-lock": {noTTL: true},
	}
	for _, s := range lock.All() {
		if got := traitsOf(scenario.WithTraits(event.Header{Scenario: "oversell", Strategy: s.Name}), "lock:stock"); got != want[s.Name] {
			t.Errorf("%s: %+v, want %+v", s.Name, got, want[s.Name])
		}
	}
	for key, w := range map[string]lockTraits{"lock:redis": {}, "lock:postgres": {noTTL: true}, "lock:etcd": {keepAlive: true, waiters: true}} {
		if got := traitsOf(scenario.WithTraits(event.Header{Scenario: "trade-offs", Strategy: "pause"}), key); got != w {
			t.Errorf("trade-offs %s: %+v, want %+v", key, got, w)
		}
	}
}
