package cli

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpFlags are the flags a command's --help lists.
func helpFlags(t *testing.T, path []string) []string {
	t.Helper()
	code, out, stderr := cli(t, append(slices.Clone(path), "--help")...)
	if code != 0 {
		t.Fatalf("%v --help: exit %d: %s", path, code, stderr)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}

// commands are every command of the CLI by path ("" for the root), with
// its flags as registered.
func commands() map[string]*pflag.FlagSet {
	out := map[string]*pflag.FlagSet{}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.InitDefaultHelpFlag()
		c.InitDefaultVersionFlag()
		out[strings.Join(path, " ")] = c.Flags()
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(newRoot(io.Discard, io.Discard), nil)
	return out
}

// composed are the commands whose flags are composed of the groups.
var composed = []string{"", "run", "record", "explore", "host", "serve", "bench"}

// TestHelpListsExactlyTheFlagsEachCommandTakes: every flag a command's
// parser takes is in its --help, none is hidden, and on the commands made
// of flag groups a flag of another command is refused by the parser: exit
// 2, one line naming it.
func TestHelpListsExactlyTheFlagsEachCommandTakes(t *testing.T) {
	t.Parallel()
	cmds := commands()
	var every []string
	for _, fl := range cmds {
		fl.VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(every, f.Name) {
				every = append(every, f.Name)
			}
		})
	}
	for path, fl := range cmds {
		args := strings.Fields(path)
		listed := helpFlags(t, args)
		var registered []string
		fl.VisitAll(func(f *pflag.Flag) {
			registered = append(registered, f.Name)
			if f.Hidden {
				t.Errorf("locklab %s: --%s is taken but hidden from --help", path, f.Name)
			}
		})
		slices.Sort(listed)
		slices.Sort(registered)
		if !slices.Equal(listed, registered) {
			t.Errorf("locklab %s: --help lists %v, the parser takes %v", path, listed, registered)
		}
		if !slices.Contains(composed, path) {
			continue
		}
		for _, name := range every {
			if fl.Lookup(name) != nil || name == "version" {
				continue
			}
			code, _, stderr := cli(t, append(slices.Clone(args), "--"+name+"=x")...)
			if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--"+name) {
				t.Errorf("locklab %s --%s=x: exit %d, stderr %q; want one line naming it, exit 2", path, name, code, stderr)
			}
		}
	}
}

// TestEveryListedFlagIsTaken: each flag the run-like commands list, given
// a good value, is not refused. The runs start on an interrupted context,
// so each ends at once; what matters is that no check turns the flag away
// (exit 2 with a line naming it).
func TestEveryListedFlagIsTaken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mr := miniredis.RunT(t) // host opens its room on a real protocol server
	room := "redis://" + mr.Addr()
	bad := regexp.MustCompile(`does not apply|unknown flag|nothing without|takes --`)
	// What each command needs to get past its arguments.
	base := map[string][]string{
		"":        {"--scenario", "oversell"},
		"run":     {"run", "oversell"},
		"record":  {"record", "oversell", "--cast", filepath.Join(dir, "out.cast")},
		"explore": {"explore", "oversell", "--seeds", "1", "--out", filepath.Join(dir, "found")},
		"host":    {"host", "--redis", room, "--attendees", "1"},
		"serve":   {"serve", "--addr", "127.0.0.1:0"},
		"bench":   {"bench", "--lock", "safe", "--workers", "1", "--rounds", "1", "--duration", "10ms", "--safety=false"},
	}
	// A good value, and what must come with it, where the flag's default
	// will not do.
	with := map[string][]string{
		"lock":                {"--lock", "safe"},
		"redis":               {"--redis", "redis://127.0.0.1:1"},
		"slowmo":              {"--slowmo", "2", "--redis", "redis://127.0.0.1:1"},
		"topology":            {"--topology", "single"},
		"events":              {"--events", filepath.Join(dir, "e.jsonl")},
		"json":                {"--json", filepath.Join(dir, "r.json")},
		"schedule-out":        {"--schedule-out", filepath.Join(dir, "s.json")},
		"faults":              {"--faults", "pause:w00@1ms+5ms"},
		"fault":               {"--fault", "latency=5ms:w00@1ms+5ms"},
		"schedule":            {"--schedule", "manual", "--lock", "safe"},
		"ssh-password":        {"--ssh-password", "pw", "--ssh", "127.0.0.1:0"},
		"ssh-authorized-keys": {"--ssh-authorized-keys", filepath.Join(dir, "keys"), "--ssh", "127.0.0.1:0"},
		"ssh-host-key":        {"--ssh-host-key", filepath.Join(dir, "hk"), "--ssh", "127.0.0.1:0"},
		"allow-host":          {"--allow-host", "lab.local"},
		"cast":                {"--cast", filepath.Join(dir, "v.cast")},
		"results":             {"--results", filepath.Join(dir, "res")},
	}
	perCommand := map[string]map[string][]string{
		"":        {"level": {"--level", "first-sale"}, "serve": {"--serve", "127.0.0.1:0"}, "ssh": {"--serve", "127.0.0.1:0", "--ssh", "127.0.0.1:0"}, "allow-host": {"--serve", "127.0.0.1:0", "--allow-host", "lab.local"}},
		"record":  {"schedule": {"--schedule", filepath.Join(dir, "none.json")}, "from": {"--from", filepath.Join(dir, "none.jsonl")}, "talk": {"--talk", filepath.Join(dir, "none.yaml")}},
		"run":     {"schedule": {"--schedule", filepath.Join(dir, "none.json")}},
		"explore": {"json": {"--json"}},
		"bench":   {"json": {"--json"}, "lock": {"--lock", "fenced"}, "workers": {"--workers", "2"}, "rounds": {"--rounds", "1"}, "duration": {"--duration", "10ms"}},
		"host":    {"ssh": {"--ssh", "127.0.0.1:0"}, "redis": {"--redis", room}, "attendees": {"--attendees", "2"}},
		"serve":   {"addr": {"--addr", "127.0.0.1:0"}},
	}
	cmds := commands()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing runs for long
	for path, args := range base {
		for _, name := range helpFlags(t, strings.Fields(path)) {
			if name == "help" || name == "version" {
				continue
			}
			given, ok := perCommand[path][name]
			if !ok {
				given, ok = with[name]
			}
			if !ok {
				f := cmds[path].Lookup(name)
				given = []string{"--" + name + "=" + f.DefValue}
				if f.Value.Type() == "stringArray" || f.Value.Type() == "intSlice" {
					t.Fatalf("locklab %s --%s: no good value known; add one", path, name)
				}
			}
			full := append(slices.Clone(args), given...)
			if name == "level" {
				full = given // a level or a schedule fixes the scenario
			}
			var out, errb strings.Builder
			code := execute(ctx, full, &out, &errb)
			if code == 2 && strings.Contains(errb.String(), "--"+name) && bad.MatchString(errb.String()) {
				t.Errorf("locklab %s: --%s is listed but refused: %s", strings.Join(full, " "), name, errb.String())
			}
		}
	}
}
