package talk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
)

func TestShippedTalksLoad(t *testing.T) {
	files, _ := filepath.Glob("../talks/*.yaml")
	if len(files) == 0 {
		t.Fatal("no talks in ../talks")
	}
	for _, f := range files {
		tk, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(tk.Scenes) == 0 || tk.Title == "" {
			t.Errorf("%s: %d scenes, title %q", f, len(tk.Scenes), tk.Title)
		}
	}
}

func TestParse(t *testing.T) {
	src := `title: T
scenes:
  - scenario: oversell
    strategy: safe
    seed: 7
    params: {workers: 12, stock: 3, delay: 80ms, ttl: 50ms, retry: full-jitter}
    beats:
      - beat: 2
        notes: second
      - beat: 1
        caption: first
  - scenario: redlock
`
	tk, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := tk.Scenes[0]
	if s.Seed != 7 || s.Params.Workers != 12 || s.Params.Stock != 3 || s.Params.Delay.D() != 80*time.Millisecond ||
		s.Params.TTL.D() != 50*time.Millisecond || s.Params.Retry != "full-jitter" || s.Line != 3 {
		t.Errorf("scene 1: %+v", s)
	}
	if b, ok := s.Beat(1, ""); !ok || b.Caption != "first" || s.Beats[0].Notes != "second" {
		t.Errorf("beats: %+v", s.Beats)
	}
	r := tk.Scenes[1]
	if r.Strategy != "redlock" || r.Params.Nodes != 5 || r.Seed != 1 || r.Title == "" {
		t.Errorf("scene 2 defaults: %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	oversell, _ := scenario.Lookup("oversell")
	cases := []struct{ name, src, want string }{
		{"unknown scenario", "scenes:\n  - scenario: overrsell\n", "t.yaml:2: unknown scenario \"overrsell\": want one of " + scenario.Names()},
		{"unknown strategy", "scenes:\n  - scenario: oversell\n    strategy: saf\n", "t.yaml:3: \"saf\" is not a strategy of oversell: want one of " + oversell.StrategyNames()},
		{"unknown param", "scenes:\n  - scenario: oversell\n    params:\n      wrkers: 3\n", "t.yaml:4: unknown key \"wrkers\" in oversell's params: want one of " + strings.Join(oversell.Uses, ", ")},
		{"param not of scenario", "scenes:\n  - scenario: redlock\n    params: {order: sorted}\n", "t.yaml:3: unknown key \"order\" in redlock's params"},
		{"bad duration", "scenes:\n  - scenario: oversell\n    params: {ttl: 5 seconds}\n", "t.yaml:3: ttl: want a duration"},
		{"bad value", "scenes:\n  - scenario: oversell\n    params: {workers: 0}\n", "t.yaml:3: workers: must be between 1"},
		{"bad retry", "scenes:\n  - scenario: oversell\n    params: {retry: sometimes}\n", "t.yaml:3: retry: want one of none, fixed"},
		{"unknown key", "scenes:\n  - scenario: oversell\n    sed: 4\n", "t.yaml:3: unknown key \"sed\" in a scene: want one of " + strings.Join(sceneKeys, ", ")},
		{"no scenario", "scenes:\n  - strategy: safe\n", "t.yaml:2: a scene needs a scenario"},
		{"no scenes", "title: x\n", "t.yaml:1: no scenes"},
		{"empty", "", "t.yaml: is empty"},
		{"truncated", "scenes:\n  - scenario: oversell\n    params: {workers: 3\n", "t.yaml:2: not valid YAML: did not find expected"},
		{"tab", "scenes:\n\t- scenario: oversell\n", "t.yaml:2: not valid YAML"},
		{"bad seed", "scenes:\n  - scenario: oversell\n    seed: -1\n", "t.yaml:3: seed must be a whole number"},
		{"beat zero", "scenes:\n  - scenario: oversell\n    beats:\n      - beat: 0\n", "t.yaml:4: beat must be a number from 1"},
		{"beat id", "scenes:\n  - scenario: ttl-expiry\n    beats:\n      - beat: taken\n      - beat: tooken\n", "t.yaml:5: unknown beat \"tooken\": want a number from 1 or one of acquired, taken, stale-write, verdict"},
		{"beat twice", "scenes:\n  - scenario: oversell\n    beats:\n      - beat: 1\n      - beat: 1\n", "t.yaml:5: beat 1 is already given on line 4"},
		{"alias", "x: &a {scenario: oversell}\nscenes:\n  - *a\n", "t.yaml:1: unknown key \"x\""},
		{"alias scene", "scenes:\n  - &a {scenario: oversell}\n  - *a\n", "t.yaml:3: anchors and aliases are not supported"},
		{"list", "- a\n- b\n", "t.yaml:1: the talk must be a mapping"},
	}
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(c.src))
		var te *Error
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant prefix %s", c.name, err, c.want)
		}
	}
}

func TestBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("scenes:\n")
	for range MaxScenes + 1 {
		b.WriteString("  - scenario: oversell\n")
	}
	if _, err := Parse("t.yaml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "more than 64 scenes") {
		t.Errorf("too many scenes: %v", err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o600)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than 256 KiB") {
		t.Errorf("big file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	lg := filepath.Join(dir, "log.yaml")
	os.WriteFile(lg, []byte("scenes:\n  - scenario: oversell\n    log: nothere.jsonl\n"), 0o600)
	if _, err := Load(lg); err == nil || !strings.Contains(err.Error(), "log.yaml:2: log "+filepath.Join(dir, "nothere.jsonl")) {
		t.Errorf("missing log: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("scenes:\n  - scenario: oversell\n    params: {workers: 3}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := Parse("f.yaml", b)
		if err == nil && len(tk.Scenes) == 0 {
			t.Fatal("a talk without scenes was accepted")
		}
	})
}
