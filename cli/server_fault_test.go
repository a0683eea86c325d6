package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/store/storetest"
)

// runAgainst runs locklab against the server while fault does its worst
// to it, and checks what a user would: exit 1, one line, no panic, no
// CORRECT and no UNSAFE without a violation.
func runAgainst(t *testing.T, s *storetest.Server, fault func(), args ...string) (stdout string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := cli(t, append(args, "--redis", s.URL)...)
		done <- result{code, out, errs}
	}()
	fault()
	r := <-done
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || strings.Contains(r.stderr+r.stdout, "panic") {
		t.Fatalf("exit %d, stderr %q; want exit 1 and one line", r.code, r.stderr)
	}
	verdict := verdictOf(r.stdout)
	switch {
	case strings.HasPrefix(verdict, "CORRECT"):
		t.Fatalf("the server failed mid-run and the verdict is %q", verdict)
	case strings.HasPrefix(verdict, "UNSAFE — 0 entries") && strings.Contains(verdict, "; 0 lost"):
		t.Fatalf("UNSAFE with no violation: %q", verdict)
	case !strings.HasPrefix(verdict, "INDETERMINATE") && !strings.HasPrefix(verdict, "SERVER FAILED"):
		t.Fatalf("verdict %q: want INDETERMINATE or SERVER FAILED", verdict)
	}
	return r.stdout
}

// verdictOf is the verdict line under the summary box.
func verdictOf(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "╚") && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}

// midRun returns once the run has sold something on s: mid-run, however
// long a busy machine took to start it.
func midRun(t *testing.T, s *storetest.Server) {
	t.Helper()
	c := s.Client(t)
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		keys, _ := c.Keys(ctx, "locklab:*:stock").Result()
		if len(keys) == 1 {
			if n, err := c.Get(ctx, keys[0]).Int(); err == nil && n < 20 {
				return
			}
		}
	}
	t.Error("the run never sold anything")
}

// A long run: 20 workers take turns with a 150ms critical section.
var longRun = []string{"run", "oversell", "-q", "--lock", "safe", "--retry", "fixed", "--max-retries", "1000",
	"--workers", "20", "--stock", "20", "--delay", "150ms", "--ttl", "10s", "--seed", "7"}

func TestServerKilledMidRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	s := storetest.Start(t)
	runAgainst(t, s, func() {
		midRun(t, s)
		s.Stop() // SIGKILL
	}, longRun...)
}

func TestServerFrozenMidRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	s := storetest.Start(t)
	out := runAgainst(t, s, func() {
		midRun(t, s)
		if err := s.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
		}
		time.Sleep(7 * time.Second) // longer than a command waits for its answer
		if err := s.Signal(syscall.SIGCONT); err != nil {
			t.Error(err)
		}
	}, longRun...)
	if v := verdictOf(out); !strings.HasPrefix(v, "INDETERMINATE") {
		t.Errorf("frozen, then thawed: %q, want INDETERMINATE", v)
	}
	// The server is back: the run left none of its keys behind.
	keys, err := s.Client(t).Keys(context.Background(), "locklab:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}
