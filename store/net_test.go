package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// TestSafetyNet: on a real server a key the run writes has a TTL at once
// (and again after a SET drops it); a lock taken by SETNX keeps PTTL -1
// for the grace, then gets the net; a TTL the run set is never replaced.
func TestSafetyNet(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, raw := s.Client(), srv.Client(t)
	stock, lockA, own := s.Key("stock"), s.Key("lock:A"), s.Key("lock:B")
	c.Set(ctx, stock, 5, 0)
	if d := raw.PTTL(ctx, stock).Val(); d <= 0 || d > store.NetTTL {
		t.Fatalf("stock: PTTL %v right after SET, want the net", d)
	}
	c.Decr(ctx, stock)
	c.Set(ctx, stock, 3, 0) // a SET drops a TTL; the net comes back with it
	if d := raw.PTTL(ctx, stock).Val(); d <= 0 {
		t.Fatalf("stock: PTTL %v after a second SET", d)
	}
	c.SetNX(ctx, lockA, "tok", 0)
	if d := c.PTTL(ctx, lockA).Val(); d != -1 {
		t.Fatalf("lock:A: PTTL %v right after SETNX, want -1 (the naive lesson)", d)
	}
	c.SetNX(ctx, own, "tok", 0)
	c.PExpire(ctx, own, 30*time.Second) // the run's own TTL, set during the grace
	if !waitTTL(ctx, raw, lockA) {
		t.Fatal("lock:A never got the net")
	}
	if d := raw.PTTL(ctx, own).Val(); d > 30*time.Second {
		t.Fatalf("lock:B: own TTL replaced by the net: %v", d)
	}
	marks := raw.Keys(ctx, s.Key(store.MarkerName+":*")).Val()
	records := raw.Keys(ctx, s.Key(store.OwnerName+":*")).Val()
	if len(marks) != 1 || len(records) != 1 {
		t.Fatalf("registration: heartbeat %v, owner record %v; want one of each", marks, records)
	}
	if o, ok := store.ParseOwner(raw.Get(ctx, records[0]).Val()); !ok || o.NS != s.RunID() {
		t.Fatalf("owner record %q does not name the run", raw.Get(ctx, records[0]).Val())
	}
	if d := raw.PTTL(ctx, records[0]).Val(); d <= store.HeartbeatTTL || d > store.OwnerTTL {
		t.Fatalf("owner record's PTTL %v", d)
	}
	s.Close()
	if n := raw.Exists(ctx, stock, lockA, own, marks[0], records[0]).Val(); n != 0 {
		t.Fatalf("Close left %d keys", n)
	}
	if s.Deleted() != 5 {
		t.Fatalf("Close says %d keys deleted, want 5", s.Deleted())
	}
}

// A SET that gives its key a TTL (a lock's SET NX PX) goes alone: no
// PEXPIRE beside it.
func TestSafetyNetLeavesATTLWriteAlone(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, raw := s.Client(), srv.Client(t)
	pexpires := func() string {
		info := raw.Info(ctx, "commandstats").Val()
		for _, line := range strings.Split(info, "\n") {
			if strings.HasPrefix(line, "cmdstat_pexpire:") {
				calls, _, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_pexpire:"), ",")
				return calls
			}
		}
		return "calls=0"
	}
	before := pexpires()
	for i := range 10 {
		key := s.Key("lock:" + strconv.Itoa(i))
		c.SetNX(ctx, key, "tok", 30*time.Second)
		c.Set(ctx, key, "tok", 30*time.Second)
	}
	if after := pexpires(); after != before {
		t.Errorf("PEXPIRE %s before 20 SETs with a TTL, %s after: want none sent", before, after)
	}
	c.Set(ctx, s.Key("stock"), 1, 0)
	if after := pexpires(); after == before {
		t.Error("a SET without a TTL got no net")
	}
}

// waitTTL polls until key has a TTL (a bound on the wait, not a timing
// assertion).
func waitTTL(ctx context.Context, c *redis.Client, key string) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if c.PTTL(ctx, key).Val() > 0 {
			return true
		}
	}
	return false
}

// BenchmarkSetRealNetted and BenchmarkSetRealPlain: what the net costs a
// worker's write on a real server (one PEXPIRE NX in the same round trip).
func BenchmarkSetRealNetted(b *testing.B) {
	srv := storetest.Start(b)
	s, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchSet(b, s.Client().(*redis.Client), s.Key("stock"))
}

func BenchmarkSetRealPlain(b *testing.B) {
	srv := storetest.Start(b)
	benchSet(b, srv.Client(b), "locklab:000000000000:stock")
}

func benchSet(b *testing.B, c *redis.Client, key string) {
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := c.Set(ctx, key, i, 0).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSafetyNetKeepsTransactions: on a real server, WATCH stays on the
// connection that sent it and a MULTI/EXEC of the run's keys still reads
// its replies: a write by someone else since the WATCH fails the
// transaction, none lets it through, and its key is netted.
func TestSafetyNetKeepsTransactions(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, raw, key := s.Client(), srv.Client(t), s.Key("stock")
	c.Set(ctx, key, 5, 0)
	tx := func(interfere bool) error {
		conn := c.(*redis.Client).Conn()
		defer conn.Close()
		if err := conn.Process(ctx, redis.NewStatusCmd(ctx, "watch", key)); err != nil {
			t.Fatal(err)
		}
		v, err := conn.Get(ctx, key).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if interfere {
			raw.Set(ctx, key, 9, 0)
		}
		_, err = conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, v-1, 0)
			return nil
		})
		return err
	}
	if err := tx(false); err != nil {
		t.Fatalf("a transaction nobody interfered with: %v", err)
	}
	if v := raw.Get(ctx, key).Val(); v != "4" {
		t.Fatalf("stock %s after the transaction, want 4", v)
	}
	if d := raw.PTTL(ctx, key).Val(); d <= 0 {
		t.Fatalf("PTTL %v after the transaction's SET, want the net", d)
	}
	if err := tx(true); err != redis.TxFailedErr {
		t.Fatalf("a transaction after another client's write: %v, want %v", err, redis.TxFailedErr)
	}
}
