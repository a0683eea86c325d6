package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// Network faults on a real server act on the worker's own link, in the
// direction given: a reply lost on the way down leaves the command done; a
// request lost on the way up leaves it undone; other workers never notice.
func TestNetworkFaultsOnARealServer(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	s, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL + "?read_timeout=200ms"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w0 := store.WithWorker(context.Background(), 0)
	w1 := store.WithWorker(context.Background(), 1)
	c, key := s.Client(), s.Key("k")
	get := func() string { v, _ := c.Get(context.Background(), key).Result(); return v }
	// The first fault moves the worker to links of its own, which open
	// their own connections.
	id, err := s.AddToxic(0, 0, store.Toxic{Kind: store.ToxicLatency, Dir: store.Up, D: 1})
	if err != nil || !s.LiftToxic(id) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		toxic   store.Toxic
		value   string
		errWord string
		landed  bool
	}{
		{store.Toxic{Kind: store.ToxicReset, Dir: store.Down}, "a", "connection reset by peer", true},
		{store.Toxic{Kind: store.ToxicTimeout, Dir: store.Up}, "b", "i/o timeout", false},
		{store.Toxic{Kind: store.ToxicLimitData, Dir: store.Up, Bytes: 8}, "c", "EOF", false},
		{store.Toxic{Kind: store.ToxicPartition, Dir: store.Both}, "d", "connection reset by peer", false}, // the open connection is cut
		{store.Toxic{Kind: store.ToxicLatency, Dir: store.Both, D: 1e6, Jitter: 1e5}, "e", "", true},
	} {
		before := get()
		if err := c.Ping(w0).Err(); err != nil { // the link has a connection open
			t.Fatalf("before %s: %v", tc.toxic, err)
		}
		id, err := s.AddToxic(0, 0, tc.toxic)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Set(w0, key, tc.value, 0).Err()
		switch {
		case tc.errWord == "" && err != nil, tc.errWord != "" && (err == nil || !strings.Contains(err.Error(), tc.errWord)):
			t.Errorf("%s: worker 0's SET: %v, want %q", tc.toxic, err, tc.errWord)
		}
		if got := get(); (got == tc.value) != tc.landed {
			t.Errorf("%s: the key holds %q after worker 0's SET %q (before %q): landed should be %v", tc.toxic, got, tc.value, before, tc.landed)
		}
		if err := c.Ping(w1).Err(); err != nil {
			t.Errorf("%s: worker 1 is not on worker 0's link but its PING failed: %v", tc.toxic, err)
		}
		if !s.LiftToxic(id) || s.LiftToxic(id) {
			t.Errorf("%s: lifted once", tc.toxic)
		}
		if err := c.Set(w0, key, "after", 0).Err(); err != nil {
			t.Errorf("%s lifted: worker 0's SET still fails: %v", tc.toxic, err)
		}
	}
}

// A partitioned worker's new connections are refused; the others' are not.
func TestAPartitionRefusesTheWorkersDials(t *testing.T) {
	t.Parallel()
	s, err := store.Open(context.Background(), store.Config{Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.AddToxic(3, 1, store.Toxic{Kind: store.ToxicPartition, Dir: store.Both})
	if err != nil {
		t.Fatal(err)
	}
	w3 := store.WithWorker(context.Background(), 3)
	if err := s.Clients()[1].Ping(w3).Err(); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("w03 → node 1 while partitioned: %v, want it refused", err)
	}
	if err := s.Clients()[0].Ping(w3).Err(); err != nil {
		t.Errorf("w03 → node 0 is not cut: %v", err)
	}
	if err := s.Clients()[1].Ping(store.WithWorker(context.Background(), 2)).Err(); err != nil {
		t.Errorf("w02 → node 1 is not cut: %v", err)
	}
	s.LiftToxic(id)
	if err := s.ClientsFor(3)[1].Ping(w3).Err(); err != nil {
		t.Errorf("w03 → node 1 after the partition: %v", err)
	}
}

func TestABadNetworkFaultIsRefused(t *testing.T) {
	t.Parallel()
	s, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, x := range []store.Toxic{
		{Kind: store.ToxicLatency, Dir: store.Both},
		{Kind: store.ToxicBandwidth, Dir: store.Up},
		{Kind: store.ToxicLimitData, Dir: store.Down, Bytes: -1},
		{Kind: store.ToxicSlowClose, Dir: store.Down},
		{Kind: store.ToxicReset},
		{Kind: 99, Dir: store.Up},
	} {
		if _, err := s.AddToxic(0, 0, x); err == nil {
			t.Errorf("%+v was accepted", x)
		}
	}
	if _, err := s.AddToxic(0, 3, store.Toxic{Kind: store.ToxicPartition, Dir: store.Both}); err == nil {
		t.Error("a fault on node 3 of a one-node store was accepted")
	}
}
