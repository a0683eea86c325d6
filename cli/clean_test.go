package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// TestMain lets a test run locklab itself as a separate process: the test
// binary re-executed with LOCKLAB_TEST_MAIN=1 is locklab.
func TestMain(m *testing.M) {
	if os.Getenv("LOCKLAB_TEST_MAIN") == "1" {
		if os.Getenv("LOCKLAB_TEST_READY") == "3" { // the parent waits for this byte
			ready := os.NewFile(3, "ready")
			ready.Write([]byte{1})
			ready.Close()
		}
		os.Exit(Main())
	}
	// The tests mostly wait on servers and processes they started: twelve
	// at once took 19–24 s where six took 26–31 s. Under the race
	// detector, which slows every one of them, six.
	parallel := 12
	if raceEnabled {
		parallel = 6
	}
	storetest.WidenParallel(parallel)
	os.Exit(m.Run())
}

// locklab starts locklab as a process of its own; its output goes to out.
func locklab(t *testing.T, out *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKLAB_TEST_MAIN=1")
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

// foreignKey is a key that is not locklab's, as it was before.
type foreignKey struct {
	dump string
	ttl  time.Duration
}

// plantForeign writes keys of every type, with and without TTLs, some of
// them named almost like locklab's.
func plantForeign(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	names := []string{"locklab:0123456789ab:userdata", "locklab:0123456789ab:owner:0123456789ab", "locklab:notahexid:stock", "locklab:0123456789ab", "locklab:0123456789AB:stock",
		"locklab:0123456789a:stock", "xlocklab:0123456789ab:stock", "locklab", "locklab:", "stock", "lock:A"}
	for i := range 120 {
		names = append(names, fmt.Sprintf("app:%d:item", i))
	}
	for i, k := range names {
		var err error
		switch i % 6 {
		case 0:
			err = c.Set(ctx, k, fmt.Sprintf("value %d \x00\xff", i), 0).Err()
		case 1:
			err = c.HSet(ctx, k, "a", i, "b", "two").Err()
		case 2:
			err = c.RPush(ctx, k, 1, 2, i).Err()
		case 3:
			err = c.SAdd(ctx, k, "x", i).Err()
		case 4:
			err = c.ZAdd(ctx, k, redis.Z{Score: float64(i), Member: "m"}).Err()
		case 5:
			err = c.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"f", i}}).Err()
		}
		if err == nil && i%3 == 0 {
			err = c.Expire(ctx, k, time.Hour+time.Duration(i)*time.Second).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// foreign snapshots every key on the server, before any run: none is
// locklab's, whatever its name.
func foreign(t *testing.T, c *redis.Client) map[string]foreignKey {
	t.Helper()
	ctx := context.Background()
	out := map[string]foreignKey{}
	for _, k := range c.Keys(ctx, "*").Val() {
		out[k] = foreignKey{dump: c.Dump(ctx, k).Val(), ttl: c.PTTL(ctx, k).Val()}
	}
	return out
}

var runKeyRe = regexp.MustCompile(`^locklab:([0-9a-zA-Z-]+):.+$`)

// runKeys are the keys of the namespaces that a run registered (an owner
// record), by namespace.
func runKeys(c *redis.Client) map[string][]string {
	runs, owned := map[string][]string{}, map[string]bool{}
	for _, k := range c.Keys(context.Background(), "locklab:*").Val() {
		if m := runKeyRe.FindStringSubmatch(k); m != nil {
			runs[m[1]] = append(runs[m[1]], k)
			if strings.HasPrefix(k, "locklab:"+m[1]+":owner:") {
				if _, ok := store.ParseOwner(c.Get(context.Background(), k).Val()); ok {
					owned[m[1]] = true
				}
			}
		}
	}
	for id := range runs {
		if !owned[id] {
			delete(runs, id)
		}
	}
	return runs
}

// waitFor polls cond for up to limit (a bound on a wait, not a timing
// assertion: a slow machine only waits longer).
func waitFor(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestKilledRunsKeysExpireAndCleanRemovesExactlyThem: runs of the
// scenarios that leave keys are killed with SIGKILL on a real server; every
// key of theirs carries a TTL; locklab clean lists them (--dry-run deletes
// nothing), then deletes exactly them: a live run's keys and 129 foreign
// keys of every type stay byte-identical, with their TTLs.
func TestKilledRunsKeysExpireAndCleanRemovesExactlyThem(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts locklab processes")
	}
	srv := storetest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	plantForeign(t, c)
	before := foreign(t, c)

	runs := [][]string{
		{"oversell", "--lock", "safe", "--stock", "100", "--workers", "4", "--retry", "fixed", "--max-retries", "1000"},
		{"fencing", "--lock", "fenced"},
		{"queue-double"},
		{"queue-double", "--lock", "idempotency"},
		{"webhook", "--lock", "idempotency"},
		{"naive-flaws"},
	}
	dead := map[string]bool{}
	for _, args := range runs {
		seen := runKeys(c)
		var buf bytes.Buffer
		cmd := locklab(t, &buf, append(append([]string{"run"}, args...), "--redis", srv.URL, "--slowmo", "1000", "-q")...)
		var id string
		// The run is under way once its registration (owner record and
		// heartbeat) and a key of its own exist.
		if !waitFor(20*time.Second, func() bool {
			for rid, keys := range runKeys(c) {
				if seen[rid] == nil && len(keys) >= 3 {
					id = rid
					return true
				}
			}
			return false
		}) {
			t.Fatalf("%s: no run appeared on the server; locklab said:\n%s", args[0], buf.String())
		}
		// Every key it has made carries a TTL while it runs (a lock taken
		// without one only after the grace that keeps naive-flaws' lesson).
		allTTL := func() bool {
			for _, k := range runKeys(c)[id] {
				if c.PTTL(ctx, k).Val() < 0 {
					return false
				}
			}
			return true
		}
		if !waitFor(20*time.Second, allTTL) {
			t.Fatalf("%s: a key of the live run never got its TTL", args[0])
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		state, _ := cmd.Process.Wait()
		if state != nil && state.Exited() {
			t.Fatalf("%s: the run ended before the kill (exit %d): make it last longer", args[0], state.ExitCode())
		}
		keys := runKeys(c)[id]
		for _, k := range keys {
			if d := c.PTTL(ctx, k).Val(); d == -1 { // -2: the key expired meanwhile
				t.Errorf("%s: %s has no TTL after kill -9 (PTTL %v)", args[0], k, d)
			}
		}
		t.Logf("%s: run %s killed with %d key(s), all with a TTL: %v", args[0], id, len(keys), keys)
		dead[id] = true
	}
	for _, id := range killWorkshop(t, srv.URL, c) {
		dead[id] = true
	}

	// A live run that clean must leave alone.
	seen := runKeys(c)
	var liveOut bytes.Buffer
	locklab(t, &liveOut, "run", "oversell", "--lock", "safe", "--stock", "100", "--workers", "2", "--retry", "fixed",
		"--max-retries", "1000", "--redis", srv.URL, "--slowmo", "1000", "-q")
	var live string
	if !waitFor(20*time.Second, func() bool {
		for rid, keys := range runKeys(c) {
			if seen[rid] == nil && len(keys) >= 3 {
				live = rid
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the live run never appeared; locklab said:\n%s", liveOut.String())
	}

	code, out, stderr := cli(t, "clean", "--redis", srv.URL, "--dry-run")
	if code != 0 || !strings.Contains(out, "nothing deleted") {
		t.Fatalf("clean --dry-run: exit %d\n%s%s", code, out, stderr)
	}
	for id := range dead {
		if !strings.Contains(out, "run "+id+"  not alive") {
			t.Errorf("clean --dry-run does not list dead run %s:\n%s", id, out)
		}
		if len(runKeys(c)[id]) == 0 {
			t.Errorf("clean --dry-run deleted run %s", id)
		}
	}
	if !strings.Contains(out, "run "+live+"  alive") {
		t.Errorf("clean --dry-run does not show the live run %s as alive:\n%s", live, out)
	}

	want := 0
	for id := range dead {
		want += len(runKeys(c)[id])
	}
	liveKeys := runKeys(c)[live]
	code, out, stderr = cli(t, "clean", "--redis", srv.URL)
	// A key with a short TTL of its own (a guest's presence) may expire
	// between the count and the clean: clean says so.
	m := regexp.MustCompile(`deleted (\d+) key\(s\) of (\d+) run\(s\)`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[2] != strconv.Itoa(len(dead)) || atoi(m[1]) > want || atoi(m[1]) < want-8 {
		t.Fatalf("clean: exit %d, want about %d keys of %d runs deleted\n%s%s", code, want, len(dead), out, stderr)
	}
	after := runKeys(c)
	for id := range dead {
		if len(after[id]) > 0 {
			t.Errorf("clean left run %s: %v", id, after[id])
		}
	}
	// The live run's lock comes and goes as its workers take and release
	// it; every other key of it must still be there.
	kept := map[string]bool{}
	for _, k := range after[live] {
		kept[k] = true
	}
	for _, k := range liveKeys {
		if !kept[k] && !strings.Contains(k, ":lock:") {
			t.Errorf("clean touched the live run: %v before, %v after", liveKeys, after[live])
			break
		}
	}
	now := foreign(t, c)
	for k, b := range before {
		a, ok := now[k]
		switch {
		case !ok:
			t.Errorf("foreign key %q deleted", k)
		case a.dump != b.dump:
			t.Errorf("foreign key %q changed", k)
		case (b.ttl < 0) != (a.ttl < 0) || a.ttl > b.ttl:
			t.Errorf("foreign key %q: TTL %v before, %v after", k, b.ttl, a.ttl)
		}
	}
}

// TestInterruptOnAFrozenServerSaysWhatWasLeft: Ctrl-C while the server is
// frozen (SIGSTOP) ends the run without waiting on the server, says the
// keys could not be deleted and how to remove them, and exits 1.
func TestInterruptOnAFrozenServerSaysWhatWasLeft(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts locklab processes")
	}
	cmd, out := frozenRun(t)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second): // a hang guard, not a timing assertion
		t.Fatalf("locklab still running 15 s after Ctrl-C on a frozen server; it said:\n%s", out.String())
	}
	t.Logf("exited %v after Ctrl-C", time.Since(start).Round(10*time.Millisecond))
	msg := out.String()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(msg, "could not delete the run's keys") ||
		!strings.Contains(msg, "locklab clean --redis") || strings.Contains(msg, "were deleted") {
		t.Fatalf("exit %d; locklab said:\n%s", cmd.ProcessState.ExitCode(), msg)
	}
}

// killWorkshop kills, with SIGKILL, a guest who joined a room with no host
// (the lobby is left), then a host in the middle of a round whose guest
// goes on writing a while before it is killed too (the round's stock and
// stream are left): every key left carries a TTL. It returns the
// namespaces: both rooms and the round.
func killWorkshop(t *testing.T, url string, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	var out bytes.Buffer
	join := locklab(t, &out, "join", "--redis", url, "--room", "lonely", "--name", "alice")
	if !waitFor(20*time.Second, func() bool { return c.Exists(ctx, "locklab:room-lonely:lobby").Val() == 1 }) {
		t.Fatalf("join never reached the lobby; it said:\n%s", out.String())
	}
	kill9(t, join)
	var hostOut, guestOut bytes.Buffer
	guest := locklab(t, &guestOut, "join", "--redis", url, "--room", "busy", "--name", "bob", "--workers", "3")
	host := locklab(t, &hostOut, "host", "--redis", url, "--room", "busy", "--attendees", "1", "--stock", "100",
		"--lock", "none", "--delay", "200ms", "--events", filepath.Join(t.TempDir(), "round.jsonl"))
	if !waitFor(30*time.Second, func() bool { return c.Exists(ctx, "locklab:room-busy-r1:stock").Val() == 1 }) {
		t.Fatalf("the round never started; host said:\n%s\nguest said:\n%s", hostOut.String(), guestOut.String())
	}
	kill9(t, host)
	n := c.XLen(ctx, "locklab:room-busy-r1:events").Val()
	waitFor(10*time.Second, func() bool { return c.XLen(ctx, "locklab:room-busy-r1:events").Val() > n })
	kill9(t, guest)
	left := c.Keys(ctx, "locklab:room-*").Val()
	if len(left) == 0 {
		t.Fatal("the killed workshop left no keys to clean")
	}
	for _, k := range left {
		if d := c.PTTL(ctx, k).Val(); d == -1 { // -2: the key expired meanwhile
			t.Errorf("workshop: %s has no TTL after kill -9 (PTTL %v)", k, d)
		}
	}
	t.Logf("workshop killed, keys left, all with a TTL: %v", left)
	return []string{"room-lonely", "room-busy", "room-busy-r1"}
}

// kill9 kills a locklab process with SIGKILL, which it must not have
// outlived.
func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if state, _ := cmd.Process.Wait(); state != nil && state.Exited() {
		t.Fatalf("%v ended before the kill (exit %d)", cmd.Args[1:], state.ExitCode())
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestASecondSignalEndsAtOnce: a run on a frozen server takes a while to
// stop (its cleanup waits on the server); a second signal ends locklab at
// once, saying so, whatever was stopping.
func TestASecondSignalEndsAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts locklab processes")
	}
	cmd, out := frozenRun(t)
	// Two kinds: two pending signals of one kind would merge into one.
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second): // a hang guard, not a timing assertion
		t.Fatalf("locklab still running 15 s after two signals; it said:\n%s", out.String())
	}
	if msg := out.String(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(msg, "stopped at once on a second signal") {
		t.Fatalf("exit %d; locklab said:\n%s", cmd.ProcessState.ExitCode(), msg)
	}
}

// frozenRun starts a run of oversell on a real server, waits until its
// stock is there, then freezes the server (SIGSTOP): the run's cleanup will
// wait on it. It returns the run and what locklab says.
func frozenRun(t *testing.T) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	srv := storetest.Start(t)
	c := srv.Client(t)
	out := &bytes.Buffer{}
	cmd := locklab(t, out, "run", "oversell", "--lock", "safe", "--stock", "100", "--workers", "4", "--retry", "fixed",
		"--max-retries", "1000", "--redis", srv.URL+"?pool_size=8", "--slowmo", "1000", "-q")
	if !waitFor(20*time.Second, func() bool {
		return len(runKeys(c)) > 0 && len(c.Keys(context.Background(), "locklab:*:stock").Val()) > 0
	}) {
		t.Fatalf("the run never started; locklab said:\n%s", out.String())
	}
	srv.Freeze(t)
	return cmd, out
}
