package cli

import (
	"strings"
	"testing"
)

// TestWallClockLibrariesKeepOneX: a library that reads the wall clock
// bounds its calls by real-time deadlines the embedded clock's --speed
// does not move, so another speed is refused in one line; 1× runs.
func TestWallClockLibrariesKeepOneX(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"redislock", "redsync", "rueidislock"} {
		code, _, stderr := cli(t, "run", "oversell", "--lock", lock, "--speed", "2", "-q")
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, lock+" reads the wall clock") || !strings.Contains(stderr, "keep 1×") {
			t.Errorf("--lock %s --speed 2: exit %d, stderr %q; want one line, exit 2, saying it keeps 1×", lock, code, stderr)
		}
	}
	if code, _, stderr := cli(t, "run", "oversell", "--lock", "redislock", "--speed", "1", "-q"); code != 0 {
		t.Errorf("--lock redislock --speed 1: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := cli(t, "run", "oversell", "--lock", "safe", "--speed", "2", "-q"); code != 0 {
		t.Errorf("--lock safe --speed 2: exit %d, stderr %q", code, stderr)
	}
}
