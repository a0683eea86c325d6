package scenario_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	_ "github.com/locklab/locklab/store/etcdembed"

	"github.com/locklab/locklab/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// One embedded etcd serves every seed; each run keeps its keys and leases
// under its own prefix and removes them when it ends: nothing is left.
func TestOversellEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	t.Parallel()
	c, err := store.StartEtcd(1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	oversellSeeds(t, "etcd", store.Servers{Etcd: c.URL()}, 100)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := cli.Get(ctx, "", clientv3.WithFromKey(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	leases, err := cli.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if keys.Count != 0 || len(leases.Leases) != 0 {
		var left []string
		for _, l := range leases.Leases {
			if r, err := cli.TimeToLive(ctx, l.ID, clientv3.WithAttachedKeys()); err == nil {
				left = append(left, fmt.Sprintf("%x: %ds of %ds left, %d key(s)", l.ID, r.TTL, r.GrantedTTL, len(r.Keys)))
			}
		}
		t.Errorf("the runs left %d keys and %d leases on etcd %v", keys.Count, len(leases.Leases), left)
	}
}
