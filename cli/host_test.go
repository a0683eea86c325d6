package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// locklabWith starts locklab as a process of its own with extra
// environment variables.
func locklabWith(t *testing.T, out *bytes.Buffer, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "LOCKLAB_TEST_MAIN=1"), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// waitProc waits for cmd, failing the test if it hangs (not a timing
// assertion: minutes for what takes a second) or fails.
func waitProc(t *testing.T, name string, cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end\n%s", name, out)
	}
}

// hostRound runs one headless host process in room until its round of
// two attendees is over, and returns the round's log, read back from its
// event file, with what the host printed.
func hostRound(t *testing.T, url, room string, args ...string) (*scenario.Loaded, string) {
	t.Helper()
	events := filepath.Join(t.TempDir(), room+".jsonl")
	var out bytes.Buffer
	host := locklabWith(t, &out, nil, append([]string{"host", "--redis", url, "--room", room, "--attendees", "2", "--events", events}, args...)...)
	waitProc(t, "host", host, &out)
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := scenario.LoadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return l, out.String()
}

// joiner is a locklab join process.
type joiner struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
}

// joinProc starts locklab join as name in room with workers for rounds,
// with extra environment variables; its output is logged if the test fails.
func joinProc(t *testing.T, url, room, name string, workers, rounds int, env []string) *joiner {
	t.Helper()
	j := &joiner{name: name, out: &bytes.Buffer{}}
	j.cmd = locklabWith(t, j.out, env, "join", "--redis", url, "--room", room, "--name", name,
		"--workers", strconv.Itoa(workers), "--rounds", strconv.Itoa(rounds))
	t.Cleanup(func() {
		if t.Failed() {
			_ = j.cmd.Process.Kill()
			_ = j.cmd.Wait() // its output is whole
			t.Logf("%s:\n%s", name, j.out)
		}
	})
	return j
}

// wait waits for the joiner to leave after its rounds.
func (j *joiner) wait(t *testing.T) {
	t.Helper()
	waitProc(t, j.name, j.cmd, j.out)
}

// TestHostAndTwoJoins: a host and two joiners as separate processes on a
// real redis-server, bob's clock four seconds ahead. The host's log has
// both attendees' lanes, in one order of time that bob's skew does not
// disturb, and the checker's verdict covers every worker.
func TestHostAndTwoJoins(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	alice := joinProc(t, srv.URL, "t", "alice", 2, 1, nil)
	bob := joinProc(t, srv.URL, "t", "bob", 3, 1, []string{skewEnv + "=4s"})
	l, hostOut := hostRound(t, srv.URL, "t", "--lock", "safe", "--retry", "full-jitter", "--max-retries", "60", "--stock", "3")
	alice.wait(t)
	bob.wait(t)
	if got := strings.Join(l.Header.Lanes, " "); got != "alice/1 alice/2 bob/1 bob/2 bob/3" {
		t.Fatalf("lanes %q, want alice's then bob's", got)
	}
	var last time.Duration
	first := map[string]time.Duration{}
	done := map[int32]bool{}
	step := map[int32]event.Kind{} // each lane's last lock step
	for _, e := range l.Log.Events() {
		if e.T < last {
			t.Fatalf("event %d at %v, after one at %v", e.Seq, e.T, last)
		}
		last = e.T
		if e.Worker < 0 {
			continue
		}
		who := check.AttendeeOf(l.Header.Lanes[e.Worker])
		if _, ok := first[who]; !ok && e.Kind == event.KindAttempt {
			first[who] = e.T
		}
		switch e.Kind {
		case event.KindAcquired, event.KindDenied:
			if step[e.Worker] != event.KindAttempt {
				t.Fatalf("event %d: %s %s without an attempt before it", e.Seq, l.Header.Lanes[e.Worker], e.Kind)
			}
		case event.KindDone:
			done[e.Worker] = true
		}
		if e.Kind == event.KindAttempt || e.Kind == event.KindAcquired || e.Kind == event.KindDenied {
			step[e.Worker] = e.Kind
		}
	}
	if len(done) != 5 {
		t.Fatalf("outcomes of %d lanes, want all 5", len(done))
	}
	// Everyone started at one instant: bob's four seconds of skew are gone.
	if d := first["bob"] - first["alice"]; d > 2*time.Second || d < -2*time.Second {
		t.Fatalf("bob's first attempt %v from alice's: his clock's skew reached the log", d)
	}
	s := scenario.Summarize(l.Header, l.Log)
	if s.Attempts != 5 || s.Successes != 3 || s.FinalStock != 0 {
		t.Fatalf("verdict over %d workers, %d sold, final stock %d; want 5, 3, 0\n%s", s.Attempts, s.Successes, s.FinalStock, hostOut)
	}
	for _, name := range []string{"alice", "bob"} {
		if !strings.Contains(hostOut, name+" joined") {
			t.Fatalf("the host did not see %s join:\n%s", name, hostOut)
		}
	}
}

// TestHostDeadlockRingAcrossProcesses: the deadlock scenario with its ring
// across two joiner processes (alice/1 → bob/1 → alice/1): each waits for a
// lock the other machine holds, the host names each holder from its token,
// and its checker finds the cycle.
func TestHostDeadlockRingAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	alice := joinProc(t, srv.URL, "ring", "alice", 1, 1, nil)
	bob := joinProc(t, srv.URL, "ring", "bob", 1, 1, []string{skewEnv + "=-3s"})
	l, hostOut := hostRound(t, srv.URL, "ring", "--scenario", "deadlock", "--lock", "safe", "--ttl", "2s", "--work", "1s")
	alice.wait(t)
	bob.wait(t)
	peers := map[int32]int32{}
	for _, e := range l.Log.Events() {
		if e.Kind == event.KindWait && e.Has&event.HasPeer != 0 {
			peers[e.Worker] = e.Peer
		}
	}
	if peers[0] != 1 || peers[1] != 0 {
		t.Fatalf("wait-for edges %v, want alice/1 → bob/1 and bob/1 → alice/1\n%s", peers, hostOut)
	}
	if s := scenario.Summarize(l.Header, l.Log); s.Deadlocks == 0 {
		t.Fatalf("no deadlock in the ring across two machines: %s\n%s", s.Verdict, hostOut)
	}
}

func TestHostRefusesStories(t *testing.T) {
	t.Parallel()
	for _, sc := range []string{"crash", "redlock"} {
		code, _, stderr := cli(t, "host", "--redis", "redis://127.0.0.1:1", "--scenario", sc)
		if code != 2 || !strings.Contains(stderr, scenario.JoinableNames()) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("host --scenario %s: exit %d, %q; want exit 2, one line listing %s", sc, code, stderr, scenario.JoinableNames())
		}
	}
}
