package spawn_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/store/storetest"
)

// leftover makes a topology directory owned by pid with a redis-server
// working in it, as a locklab killed without its parent-death signal
// (another OS) would leave it.
func leftover(t *testing.T, owner int) (string, *exec.Cmd) {
	t.Helper()
	dir, err := os.MkdirTemp("", "locklab-topo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "locklab-owner"), []byte("locklab "+strconv.Itoa(owner)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "primary-1")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Dir = sub
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Until the exec is done the process is still this test's binary.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe"); strings.HasPrefix(filepath.Base(exe), "redis-") {
			break
		}
	}
	return dir, cmd
}

func TestCleanStopsWhatADeadLocklabLeftAndNothingOfALiveOne(t *testing.T) {
	t.Parallel()
	storetest.RequireBin(t, "redis-server")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir, dead := leftover(t, gone.Process.Pid)
	liveDir, _ := leftover(t, os.Getpid()) // this test binary: alive
	left, err := spawn.FindLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	var found *spawn.SpawnedLeft
	for i := range left {
		if left[i].Dir == liveDir {
			t.Fatalf("a live locklab's servers are listed: %+v", left[i])
		}
		if left[i].Dir == deadDir {
			found = &left[i]
		}
	}
	if found == nil || len(found.PIDs) != 1 || found.PIDs[0] != dead.Process.Pid {
		t.Fatalf("the dead locklab's server is not found: %+v", left)
	}
	if err := found.Remove(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- dead.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the leftover server still runs")
	}
	if _, err := os.Stat(deadDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is left", deadDir)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Fatalf("a live locklab's directory was touched: %v", err)
	}
}
