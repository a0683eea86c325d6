package cli

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
)

func TestCompletionScriptsForEveryShell(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := cli(t, "completion", shell)
		if code != 0 || !strings.Contains(out, "locklab") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(out), errOut)
		}
	}
}

// candidates asks cobra's hidden completion command, as a shell does.
func candidates(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, _ := cli(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d", args, code)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") {
			continue // the directive
		}
		name, _, _ := strings.Cut(line, "\t")
		names = append(names, name)
	}
	return names
}

func TestFlagValuesComplete(t *testing.T) {
	t.Parallel()
	got := strings.Join(candidates(t, "run", ""), ",")
	for _, s := range scenario.Catalogue() {
		if !strings.Contains(got, s.Name) {
			t.Errorf("run's argument completes %q, missing %s", got, s.Name)
		}
	}
	ttl, _ := scenario.Lookup("ttl-expiry")
	if got := candidates(t, "run", "ttl-expiry", "--lock", ""); strings.Join(got, ",") != strings.Join(ttl.Strategies, ",") {
		t.Errorf("run ttl-expiry --lock completes %v, want that scenario's %v", got, ttl.Strategies)
	}
	if got := candidates(t, "--lock", ""); len(got) != len(scenario.Strategies()) {
		t.Errorf("--lock with no scenario completes %d strategies, want all %d", len(got), len(scenario.Strategies()))
	}
	if got := candidates(t, "run", "oversell", "--retry", ""); len(got) != len(lock.Policies) {
		t.Errorf("--retry completes %v, want the %d policies", got, len(lock.Policies))
	}
	if got := candidates(t, "--theme", ""); !strings.Contains(strings.Join(got, ","), "colour-blind") {
		t.Errorf("--theme completes %v", got)
	}
	if got := candidates(t, "record", "crash:"); len(got) == 0 || !strings.HasPrefix(got[0], "crash:") {
		t.Errorf("record crash: completes %v", got)
	}
}

func TestUnknownCommandListsTheRealCommands(t *testing.T) {
	t.Parallel()
	code, _, errOut := cli(t, "frob")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, c := range []string{"run", "replay", "list", "record", "clean", "check", "completion"} {
		if !strings.Contains(errOut, c) {
			t.Errorf("%q does not name %s", errOut, c)
		}
	}
}
