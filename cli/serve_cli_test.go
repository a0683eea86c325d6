package cli

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--scenario", "deadlock"}, "oversell, webhook, queue-double"},
		{[]string{"serve", "--scenario", "nope"}, "oversell, webhook, queue-double"},
		{[]string{"serve", "--lock", "fail-fast"}, "--lock"},
		{[]string{"serve", "--addr", "8080"}, "host:port"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, "port"},
		{[]string{"serve", "--rate", "-1"}, "--rate"},
		{[]string{"serve", "--stock", "-1"}, "--stock"},
		{[]string{"serve", "--bogus"}, "--bogus"},
		{[]string{"serve", "oversell"}, "--scenario"},
		{[]string{"serve", "--speed", "50"}, "--speed"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line naming %s", c.args, code, stderr, c.want)
		}
	}
}

func TestServeUnreachableRedis(t *testing.T) {
	t.Parallel()
	start := time.Now()
	code, _, stderr := cli(t, "serve", "--addr", "127.0.0.1:0", "--redis", "redis://:topsecret@127.0.0.1:1")
	if code != 1 || strings.Contains(stderr, "topsecret") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, %q: want exit 1, one line, no password", code, stderr)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("it took %v to give up", time.Since(start))
	}
}

func TestServeCompletesItsScenarios(t *testing.T) {
	t.Parallel()
	got := candidates(t, "serve", "--scenario", "")
	slices.Sort(got)
	if !slices.Equal(got, []string{"oversell", "queue-double", "webhook"}) {
		t.Errorf("serve --scenario completes %v", got)
	}
	if got := candidates(t, "serve", "--scenario", "webhook", "--lock", ""); !slices.Contains(got, "fail-fast") {
		t.Errorf("serve --scenario webhook --lock completes %v", got)
	}
}
