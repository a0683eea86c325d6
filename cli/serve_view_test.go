package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// ptyOutput collects what a process writes to its terminal.
type ptyOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return ansi.Strip(o.b.String())
}

// waitFor waits until the output matches re and returns the match; a hang
// fails the test (minutes for what takes a second: not a timing assertion).
func (o *ptyOutput) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(o.String()); m != nil {
			return m
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the screen never showed %s; it showed:\n%s", re, o.String())
	return nil
}

// TestServeBesideTheView: locklab --serve in a terminal of its own. POSTs
// from 20 clients land as lanes of the run on screen, which shows the
// oversell the checker finds; POST /reset puts round 2 on screen; q ends
// it with the last round's summary and its keys deleted.
func TestServeBesideTheView(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "--serve", "127.0.0.1:0", "--lock", "none", "--stock", "1", "--theme", "mono")
	cmd.Env = append(os.Environ(), "LOCKLAB_TEST_MAIN=1", "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 36, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	out := &ptyOutput{}
	go io.Copy(out, tty)

	base := "http://" + out.waitFor(t, regexp.MustCompile(`round 1 · curl -X POST http://(127\.0\.0\.1:\d+)/buy`))[1]
	const clients = 20
	var wg sync.WaitGroup
	sold := make(chan bool, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(base+"/buy", "application/json", nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var r struct{ Success bool }
			if err := json.NewDecoder(res.Body).Decode(&r); err != nil || res.StatusCode != http.StatusOK {
				t.Errorf("POST /buy: %s, %v", res.Status, err)
			}
			sold <- r.Success
		}()
	}
	wg.Wait()
	close(sold)
	n := 0
	for ok := range sold {
		if ok {
			n++
		}
	}
	res, err := http.Get(base + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Round   int
		Lanes   int
		Summary struct{ Verdict string }
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if err != nil || st.Round != 1 || st.Lanes != clients || !strings.HasPrefix(st.Summary.Verdict, "OVERSOLD") || n < 2 {
		t.Fatalf("state %+v (%v), %d sold: want round 1, %d lanes, OVERSOLD, more than one sale", st, err, n, clients)
	}
	out.waitFor(t, regexp.MustCompile(`sold \d+ of 1 .*OVERSOLD`)) // the gauge on screen: the same run
	out.waitFor(t, regexp.MustCompile(`│w19 `))                    // a lane for each request: 20 fit the box unfolded
	if res, err := http.Post(base+"/reset", "application/json", nil); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	out.waitFor(t, regexp.MustCompile(`round 2 · curl`))
	if _, err := tty.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("locklab --serve: %v\n%s", err, out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("q did not end locklab --serve\n%s", out)
	}
	out.waitFor(t, regexp.MustCompile(`(?s)round 2:.*SIMULATION RESULTS.*stopped; the round's keys were deleted`))
}

func TestServeViewUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--serve", "8080"}, "--serve"},
		{[]string{"--serve", "127.0.0.1:0", "--scenario", "crash"}, "oversell, webhook, queue-double"},
		{[]string{"--serve", "127.0.0.1:0", "--scenario", "webhook", "--lock", "naive"}, "--lock"},
		{[]string{"--serve", "127.0.0.1:0", "--cast", "x.cast"}, "--cast"},
		{[]string{"--serve", "127.0.0.1:0"}, "terminal"}, // the tests have none
		{[]string{"--serve", "127.0.0.1:0", "--ssh", "0.0.0.0:2222"}, "--ssh-password"},
		{[]string{"--serve", "127.0.0.1:0", "--ssh-password", "x"}, "without --ssh"},
		{[]string{"--ssh", ":2222"}, "--serve ADDR"},
		{[]string{"serve", "--ssh", ":2222"}, "locklab --serve ADDR --ssh ADDR"},
		{[]string{"host", "--redis", "redis://127.0.0.1:1", "--ssh", ":2222", "--serve", ":8080"}, "locklab --serve ADDR --ssh ADDR"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line naming %s", c.args, code, stderr, c.want)
		}
	}
}
