package spawn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/store/storetest"
)

// openTopology spawns a topology for t, or skips without redis-server.
func openTopology(t *testing.T, name string, lag time.Duration) *store.Store {
	t.Helper()
	storetest.RequireBin(t, "redis-server")
	if name == spawn.TopoSentinel {
		storetest.RequireBin(t, "redis-sentinel")
	}
	s, err := store.Open(context.Background(), store.Config{Topology: name, ReplicaLag: lag})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// alive reports whether process pid exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestSentinelFailoverLosesTheWriteTheReplicaMissed(t *testing.T) {
	t.Parallel()
	s := openTopology(t, spawn.TopoSentinel, 5*time.Second)
	ctx := context.Background()
	roles := map[string]int{}
	for _, sp := range s.Spawned() {
		roles[sp.Role]++
		if sp.PID == 0 || sp.State != "up" || !strings.HasPrefix(sp.Addr, "127.0.0.1:") {
			t.Fatalf("server %+v should be up on loopback", sp)
		}
	}
	if roles["primary"] != 1 || roles["replica"] != 1 || roles["sentinel"] != 3 {
		t.Fatalf("sentinel topology has roles %v, want a primary, a replica and three Sentinels", roles)
	}
	c := s.Client()
	if err := c.Set(ctx, s.Key("lock"), "w1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := s.Nodes()[0].FailOver()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "Sentinel promoted") {
		t.Fatalf("failover says %q", msg)
	}
	// The client finds the new primary through Sentinel: the key is gone.
	var got error
	for range 20 {
		if got = c.Get(ctx, s.Key("lock")).Err(); got == nil || strings.Contains(got.Error(), "nil") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got == nil {
		t.Fatal("the write the replica had not received survived the failover")
	}
	ok, err := c.SetNX(ctx, s.Key("lock"), "w2", time.Minute).Result()
	if err != nil || !ok {
		t.Fatalf("a second holder should get the lock on the promoted replica: %v %v", ok, err)
	}
}

func TestReplicaTopologyFailsOverWithReplicaofNoOne(t *testing.T) {
	t.Parallel()
	s := openTopology(t, spawn.TopoReplica, 5*time.Second)
	ctx := context.Background()
	c := s.Client()
	c.Set(ctx, s.Key("k"), "v", time.Minute)
	msg, err := s.Nodes()[0].FailOver()
	if err != nil || !strings.Contains(msg, "REPLICAOF NO ONE") {
		t.Fatalf("failover: %q %v", msg, err)
	}
	if err := c.Get(ctx, s.Key("k")).Err(); err == nil {
		t.Fatal("the unreplicated write survived")
	}
	if err := c.Set(ctx, s.Key("k"), "v2", time.Minute).Err(); err != nil {
		t.Fatalf("the promoted replica should take writes: %v", err)
	}
	if _, err := s.Nodes()[0].FailOver(); err == nil {
		t.Fatal("a second failover has no replica left")
	}
}

func TestSpawnedPauseAndRestartEmpty(t *testing.T) {
	t.Parallel()
	s := openTopology(t, spawn.TopoSingle, 0)
	ctx := context.Background()
	n, c := s.Nodes()[0], s.Client()
	c.Set(ctx, s.Key("k"), "v", time.Minute)
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if st := s.Spawned()[0].State; st != "paused" {
		t.Fatalf("state %q after SIGSTOP", st)
	}
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	err := c.Get(short, s.Key("k")).Err()
	cancel()
	if err == nil {
		t.Fatal("a stopped server answered")
	}
	n.Resume()
	if v, err := c.Get(ctx, s.Key("k")).Result(); err != nil || v != "v" {
		t.Fatalf("after SIGCONT: %q %v", v, err)
	}
	pid := s.Spawned()[0].PID
	if err := n.Stop(); err != nil || !n.Down() || alive(pid) {
		t.Fatalf("SIGKILL: err %v, down %v, alive %v", err, n.Down(), alive(pid))
	}
	if err := n.Start(true); err != nil {
		t.Fatal(err)
	}
	if n.KeepsData() {
		t.Fatal("a spawned server has no persistence")
	}
	if err := c.Get(ctx, s.Key("k")).Err(); err == nil {
		t.Fatal("the restarted server kept its keys")
	}
}

func TestCloseStopsEveryServerAndRemovesTheirDirectory(t *testing.T) {
	t.Parallel()
	storetest.RequireBin(t, "redis-server")
	s, err := store.Open(context.Background(), store.Config{Topology: spawn.TopoRedlock})
	if err != nil {
		t.Fatal(err)
	}
	sp := s.Spawned()
	if len(sp) != 5 || len(s.Nodes()) != 5 {
		t.Fatalf("redlock spawned %d servers for %d nodes", len(sp), len(s.Nodes()))
	}
	dir := dirOf(t, sp[0].PID)
	s.Close()
	for _, p := range sp {
		if alive(p.PID) {
			t.Fatalf("%s (pid %d) still runs after Close", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is left: %v", dir, err)
	}
}

// dirOf is the topology directory a spawned server works in.
func dirOf(t *testing.T, pid int) string {
	t.Helper()
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(cwd)
}

func TestTopologyThatDoesNotAnswerIsStoppedAndNamed(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, "redis-server")
	// A server that starts and never listens.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho $$ >> "+bin+"/pids\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	defer spawn.SetTopologyWait(300 * time.Millisecond)()
	_, err := store.Open(context.Background(), store.Config{Topology: spawn.TopoSingle})
	if err == nil || !strings.Contains(err.Error(), "primary on 127.0.0.1:") || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("got %v, want the server that did not answer named", err)
	}
	pids, _ := os.ReadFile(filepath.Join(bin, "pids"))
	if len(pids) == 0 {
		t.Fatal("the fake server never started")
	}
	for _, f := range strings.Fields(string(pids)) {
		if pid, _ := strconv.Atoi(f); alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server that did not answer (pid %d) was left running", pid)
		}
	}
}

func TestMissingServerNamesTheDebianPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := store.Open(context.Background(), store.Config{Topology: spawn.TopoSentinel})
	var m *spawn.MissingError
	if !errors.As(err, &m) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("got %v", err)
	}
}

func TestTakenPortIsRetriedOnAnother(t *testing.T) {
	storetest.RequireBin(t, "redis-server")
	taken, restore := spawn.TakePortsOnce(t)
	defer restore()
	s := openTopology(t, spawn.TopoSingle, 0)
	if addr := s.Spawned()[0].Addr; addr == taken {
		t.Fatalf("server on %s, which was taken", addr)
	}
	if err := s.Client().Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
