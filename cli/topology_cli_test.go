package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTopologyBadInputIsOneLineExit2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "oversell", "--topology", "bogus"}, "unknown topology \"bogus\": want one of single, replica, sentinel, redlock"},
		{[]string{"run", "oversell", "--topology", "single", "--redis", "redis://127.0.0.1:1"}, "give one or the other"},
		{[]string{"run", "oversell", "--topology", "single", "--speed", "2"}, "spawned servers keep their own time"},
		{[]string{"run", "redlock", "--topology", "sentinel"}, "use --topology redlock"},
		{[]string{"explore", "oversell", "--lock", "naive", "--topology", "single"}, "--topology does not apply"},
		{[]string{"record", "oversell", "--cast", filepath.Join(t.TempDir(), "x.cast"), "--topology", "single"}, "--topology does not apply to locklab record: it spawns servers for locklab run"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want one line, exit 2, saying %q", c.args, code, stderr, c.says)
		}
	}
}

func TestTopologyWithoutRedisServerNamesThePackage(t *testing.T) {
	bin := t.TempDir()
	// redis-server is there, redis-sentinel is not.
	if p, err := exec.LookPath("redis-server"); err == nil {
		if err := os.Symlink(p, filepath.Join(bin, "redis-server")); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	code, _, stderr := cli(t, "run", "oversell", "--topology", "sentinel")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "apt-get install redis-") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bin, "redis-server")); err == nil && !strings.Contains(stderr, "apt-get install redis-sentinel") {
		t.Fatalf("with redis-server there, the missing one is redis-sentinel: %q", stderr)
	}
}

func TestTopologyRunAnnouncesItsServersAndStopsThem(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server on PATH (apt-get install redis-server)")
	}
	t.Parallel()
	ev := filepath.Join(t.TempDir(), "ev.jsonl")
	code, out, stderr := cli(t, "run", "ttl-expiry", "--lock", "safe", "--topology", "replica", "--seed", "1", "--events", ev)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "spawned replica on 127.0.0.1: primary :") {
		t.Errorf("the summary's store should name the spawned servers:\n%s", out)
	}
	b, err := os.ReadFile(ev)
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"code":"server"`) {
			continue
		}
		_, after, _ := strings.Cut(l, " · pid ")
		pid, _, _ := strings.Cut(after, " ")
		pids = append(pids, pid)
	}
	if len(pids) != 2 || !strings.Contains(string(b), "primary · primary · :") || !strings.Contains(string(b), "replica · replica · :") {
		t.Fatalf("want the primary and the replica announced, got pids %v", pids)
	}
	for _, pid := range pids {
		if stat, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("pid %s still runs after the run", pid)
		}
	}
}
