package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/store/storetest"
)

func TestBenchUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "--duration", "1ms"},
		{"bench", "--duration", "soon"},
		{"bench", "--workers", "0"},
		{"bench", "--rounds", "0"},
		{"bench", "--rounds", "many"},
		{"bench", "--need", "luck"},
		{"bench", "--workers", "many"},
		{"bench", "--lock", "nope"},
		{"bench", "--lock", "none"},
		{"bench", "--lock", "pg-advisory"},
		{"bench", "--lock", "redlock", "--redis", "redis://127.0.0.1:1"},
		{"bench", "--json", "out.json"},
		{"bench", "safe"},
		{"bench", "--redis", "http://x"},
	} {
		code, out, stderr := cli(t, args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, want 2 and nothing (stderr %q)", args, code, out, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "locklab: ") {
			t.Errorf("%v: want one line starting locklab:, got %q", args, stderr)
		}
	}
	_, _, stderr := cli(t, "bench", "--lock", "nope")
	if !strings.Contains(stderr, "safe") || !strings.Contains(stderr, "flock") || strings.Contains(stderr, "none,") {
		t.Errorf("the message should list the strategies bench measures: %q", stderr)
	}
	_, _, stderr = cli(t, "bench", "--lock", "pg-advisory")
	if !strings.Contains(stderr, "--postgres") {
		t.Errorf("a strategy without its server should say what to pass: %q", stderr)
	}
}

func TestBenchFlagsComplete(t *testing.T) {
	t.Parallel()
	got := candidates(t, "bench", "--lock", "")
	if !slices.Contains(got, "safe") || !slices.Contains(got, "pg-advisory") || slices.Contains(got, "none") {
		t.Errorf("bench --lock completes %v", got)
	}
	if got := candidates(t, "bench", "--lock", "safe,"); !slices.Contains(got, "safe,fenced") || slices.Contains(got, "safe,safe") {
		t.Errorf("bench --lock safe, completes %v", got)
	}
	for _, flag := range []string{"--workers", "--duration"} {
		if got := candidates(t, "bench", flag, ""); len(got) == 0 {
			t.Errorf("bench %s completes nothing", flag)
		}
	}
}

// benchJSON runs a short bench and decodes its JSON.
func benchJSON(t *testing.T, args ...string) bench.Report {
	t.Helper()
	args = append([]string{"bench", "--json", "--safety=false", "--duration", "20ms", "--rounds", "2", "--workers", "1,2"}, args...)
	code, out, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
	}
	if rep.Format != "locklab-bench" || rep.Version != 2 || !slices.Equal(rep.Workers, []int{1, 2}) || rep.Rounds != 2 {
		t.Errorf("%v: header %q v%d %v %d rounds", args, rep.Format, rep.Version, rep.Workers, rep.Rounds)
	}
	e := rep.Env
	if e.Locklab != version || e.Go == "" || e.OS == "" || e.CPU == "" || e.Cores < 1 || e.LoadStart == "" || e.Start == "" || e.End == "" || e.Servers["redis"] == "" {
		t.Errorf("%v: env %+v lacks something", args, e)
	}
	if len(rep.Ceilings) == 0 || rep.Ceilings[0].Name != "redis SET" || len(rep.Ceilings[0].Cells) != 2 {
		t.Errorf("%v: ceilings %+v, want redis SET at each count", args, rep.Ceilings)
	}
	for _, s := range rep.Results {
		for _, c := range s.Cells {
			if len(c.Samples) != 2 || c.Rounds != 2 || c.Min > c.PerSec || c.PerSec > c.Max {
				t.Errorf("%s at %d: %d samples, %d rounds, %v ≤ %v ≤ %v", s.Name, c.Workers, len(c.Samples), c.Rounds, c.Min, c.PerSec, c.Max)
			}
			if c.Ceiling != "" && (c.Noise != (c.Ratio > bench.Bound) || c.RatioMin > c.Ratio || c.Ratio > c.RatioMax) {
				t.Errorf("%s at %d: ratio %v [%v–%v], noise %v", s.Name, c.Workers, c.Ratio, c.RatioMin, c.RatioMax, c.Noise)
			}
		}
	}
	return rep
}

func names(rep bench.Report) []string {
	var out []string
	for _, s := range rep.Results {
		out = append(out, s.Name)
	}
	return out
}

func TestBenchJSONEmbedded(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "--lock", "safe,flock,redis-optimistic,redlock")
	got := names(rep)
	for _, want := range []string{"safe", "safe" + bench.AutoPipelined, "flock", "redis-optimistic", "redlock", "redlock" + bench.AutoPipelined} {
		if !slices.Contains(got, want) {
			t.Errorf("results %v lack %s", got, want)
		}
	}
	if len(rep.LeftOut) != 0 {
		t.Errorf("left out %v", rep.LeftOut)
	}
}

func TestBenchJSONRedisServer(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	rep := benchJSON(t, "--redis", srv.URL, "--autopipeline=false")
	got := names(rep)
	for _, want := range []string{"naive", "safe", "fenced", "watchdog", "fenced-watchdog", "flock", "semaphore", "redis-optimistic"} {
		if !slices.Contains(got, want) {
			t.Errorf("results %v lack %s", got, want)
		}
	}
	left := map[string]string{}
	for _, l := range rep.LeftOut {
		left[l.Strategy] = l.Reason
	}
	if !strings.Contains(left["redlock"], "--redis once per node") || !strings.Contains(left["pg-advisory"], "--postgres") {
		t.Errorf("left out %v: want redlock (one node) and the Postgres strategies, each saying what to pass", rep.LeftOut)
	}
	if strings.Contains(strings.Join(got, ","), bench.AutoPipelined) || len(rep.AutoPipeline) != 0 {
		t.Errorf("--autopipeline=false measured %v, advice %v", got, rep.AutoPipeline)
	}
}

func TestBenchTablesAndPlot(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bench.json")
	code, out, stderr := cli(t, "bench", "--duration", "20ms", "--workers", "1,4", "--lock", "safe,fenced", "--need", "speed", "--json="+file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"redis SET", "acquire latency", "×ceiling", "[least–most]", "load average", "AutoPipeline", "S redis SET ceiling", "a safe", "b fenced", "cycles/s by concurrent workers",
		"holder paused past its TTL", "2nd holder after", "fences stale writes", "what to pick for speed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil || !json.Valid(b) {
		t.Fatalf("--json=FILE: %v, valid %v", err, json.Valid(b))
	}
}
