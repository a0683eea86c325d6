package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/tui/draw"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// The oracle: for every scenario × strategy of the simulated catalogue,
// over a sample of seeds (ten each with LOCKLAB_DEEP=1), at oraclePlayheads playheads
// from the start to DONE, every number the views show — the header, the
// panels at 160×48 and 80×24, the verdict line, the summary box, the JSON
// report, the summary /state serves and the scoreboard — equals the
// tally's at that playhead, folded afresh from the events up to it.

const oraclePlayheads = 20

// oracleSeeds are the seeds of the n-th scenario × strategy: ten under
// LOCKLAB_DEEP=1; otherwise one, seed 1 and seed 2 taking turns, so the
// default pass samples two seeds across the catalogue in seconds.
func oracleSeeds(n int) []uint64 {
	if os.Getenv("LOCKLAB_DEEP") == "1" {
		return []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	}
	return []uint64{uint64(1 + n%2)}
}

// oracleCase is one run, read back as replay reads it.
type oracleCase struct {
	name string
	l    *scenario.Loaded
}

// oracleRuns simulates every scenario × strategy × seed of the catalogue
// on the embedded store.
func oracleRuns(t *testing.T) []oracleCase {
	var cfgs []scenario.Config
	n := 0
	for _, sc := range scenario.Catalogue() {
		if sc.RealTime != "" {
			continue
		}
		for _, strategy := range sc.Strategies {
			if scenario.ServerOf(strategy) != "redis" {
				continue
			}
			for _, seed := range oracleSeeds(n) {
				p := sc.Defaults
				if strategy == "redlock" {
					p.Nodes = max(p.Nodes, 5)
				}
				cfgs = append(cfgs, scenario.Config{Scenario: sc.Name, Strategy: strategy, Seed: seed, Params: p})
			}
			n++
		}
	}
	out := make([]oracleCase, len(cfgs))
	// Simulated runs take a core each, two at a time; the libraries' runs
	// keep real time and mostly wait on it, so they all run at once.
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wallClock := scenario.WallClock(cfg.Strategy) != ""
		wg.Add(1)
		if !wallClock {
			sem <- struct{}{}
		}
		go func() {
			defer func() {
				if !wallClock {
					<-sem
				}
				wg.Done()
			}()
			out[i] = oracleCase{fmt.Sprintf("%s/%s/seed%d", cfg.Scenario, cfg.Strategy, cfg.Seed), simulateLog(t, cfg)}
		}()
	}
	wg.Wait()
	return out
}

func simulateLog(t *testing.T, cfg scenario.Config) *scenario.Loaded {
	st, err := store.Open(context.Background(), store.Config{Nodes: cfg.Params.Nodes})
	if err != nil {
		t.Error(err)
		return nil
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events = &buf
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Error(err)
		return nil
	}
	if err := r.Wait(); err != nil {
		// A run kept in real time may lose an answer to a busy machine (a
		// vote in flight when its node restarts): its log says so, and is
		// a log like any other for the surfaces to tell.
		var se *scenario.ServerError
		if errors.As(err, &se) && scenario.WallClock(cfg.Strategy) != "" {
			t.Logf("%s/%s: %v", cfg.Scenario, cfg.Strategy, err)
		} else {
			t.Errorf("%s/%s: %v", cfg.Scenario, cfg.Strategy, err)
		}
	}
	l, err := scenario.LoadLog(&buf)
	if err != nil {
		t.Error(err)
	}
	return l
}

// TestOracleEverySurfaceShowsTheTally runs beside the package's other
// tests: what it checks is that every surface shows the tally of the log
// it is given, whatever story the machine let the real-time runs tell.
func TestOracleEverySurfaceShowsTheTally(t *testing.T) {
	t.Parallel()
	start := time.Now()
	cases := oracleRuns(t)
	simulated := time.Since(start)
	checked := 0
	for _, c := range cases {
		if c.l == nil {
			continue
		}
		evs := c.l.Log.Events()
		v := newRunView(replaySession(c.name, c.l), 1)
		v.status = ""
		for i := range oraclePlayheads {
			k := (len(evs) - 1) * i / (oraclePlayheads - 1)
			checked++
			want := check.TallyOf(check.Slice(evs[:k+1]))
			for _, err := range oracleCheck(v, c.l.Header, evs[:k+1], k, &want) {
				t.Errorf("%s at event %d of %d: %s", c.name, k, len(evs)-1, err)
			}
		}
		if t.Failed() && !testing.Verbose() {
			break // one run's disagreements say enough
		}
	}
	t.Logf("%d runs × %d playheads = %d playheads checked (×2 sizes); simulated in %v, checked in %v",
		len(cases), oraclePlayheads, checked, simulated.Round(time.Millisecond), (time.Since(start) - simulated).Round(time.Millisecond))
}

// oracleCheck compares every surface at playhead k with the tally want.
func oracleCheck(v *runView, h event.Header, prefix []event.Event, k int, want *check.Tally) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	v.paused, v.follow, v.cursor, v.playT = true, false, k, v.eventT(k)
	for _, sz := range [][2]int{{160, 48}, {80, 24}} {
		screen := v.View(themes.Mono(), sz[0], sz[1]-1)
		for _, e := range screenNumbers(screen, want, k == v.tl.N-1, v.s.summary) {
			bad("%d×%d: %s", sz[0], sz[1], e)
		}
	}
	s := scenario.Summarize(h, check.Slice(prefix))
	for _, e := range boxNumbers(s.Box(h), want) {
		bad("summary box: %s", e)
	}
	for _, e := range jsonNumbers(h, s, want) {
		bad("%s", e)
	}
	scores := scenario.Scores(h, prefix)
	var viol, denied, done int
	for _, sc := range scores {
		viol, denied, done = viol+sc.Violations, denied+sc.Denials, done+sc.Done
		if n := want.Participant(h.Lanes, sc.Name, scenario.ScoreCount(h.Scenario)); sc.Did != n {
			bad("scoreboard: %s %s %d, the tally %d", sc.Name, scenario.ScoreTerm(h.Scenario), sc.Did, n)
		}
	}
	if len(scores) > 0 && (viol != want.Get(check.NViolations) || denied != want.Denied() || done != want.Get(check.NFinished)) {
		bad("scoreboard sums violations %d, denied %d, done %d; tally %d, %d, %d", viol, denied, done,
			want.Get(check.NViolations), want.Denied(), want.Get(check.NFinished))
	}
	return errs
}

var (
	reHeaderViol = regexp.MustCompile(`│ (\d+) violation\(s\)`)
	reRetries    = regexp.MustCompile(`(\d+) retries(, mean|:)`)
	reGauge      = regexp.MustCompile(`sold (\d+) of (-?\d+)  stock (-?\d+) → (-?\d+)  expected (-?\d+)`)
	reGaugeLine  = regexp.MustCompile(`stock (-?\d+) → (-?\d+)  sold (\d+) of (-?\d+)  lost updates (\d+)`)
	reLost       = regexp.MustCompile(`lost updates (\d+)`)
	reStale      = regexp.MustCompile(`stale landed (\d+) refused (\d+)`)
	reTag        = regexp.MustCompile(`UNSAFE: (\d+) violation\(s\)`)
	reVerdict    = regexp.MustCompile(`attempts (\d+) · ok (\d+) · lock fails (\d+) · stock fails (\d+)`)
	reOverlaps   = regexp.MustCompile(`overlaps (\d+) · lost updates (\d+)`)
)

// screenNumbers checks the numbers a rendered frame shows.
func screenNumbers(screen string, t *check.Tally, done bool, sum *check.Summary) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	eq := func(what string, got string, want int) {
		if n, _ := strconv.Atoi(got); n != want {
			bad("%s shows %s, the tally %d", what, got, want)
		}
	}
	lines := strings.Split(screen, "\n")
	if m := reHeaderViol.FindStringSubmatch(lines[0]); m != nil {
		eq("header violations", m[1], t.Get(check.NViolations))
	} else if t.Get(check.NViolations) > 0 && !strings.Contains(lines[0], "…") {
		bad("header shows no violations, the tally %d", t.Get(check.NViolations))
	}
	for _, m := range reRetries.FindAllStringSubmatch(screen, -1) {
		eq("retries", m[1], t.Get(check.NRetries))
	}
	for i, b := range draw.DelayBins {
		re := regexp.MustCompile(regexp.QuoteMeta(b.Label) + `(?: [█▏▎▍▌▋▊▉]+ (\d+)| ×(\d+))`)
		for _, m := range re.FindAllStringSubmatch(screen, -1) {
			eq("retry bar "+b.Label, m[1]+m[2], t.RetryBin(i))
		}
	}
	for _, m := range reGauge.FindAllStringSubmatch(screen, -1) {
		eq("gauge sold", m[1], t.Get(check.NSold))
		eq("gauge stock before", m[3], t.Get(check.NInitialStock))
		eq("gauge stock now", m[4], t.Get(check.NCurrentStock))
		eq("gauge expected", m[5], int(t.Expected()))
	}
	for _, m := range reGaugeLine.FindAllStringSubmatch(screen, -1) {
		eq("gauge line sold", m[3], t.Get(check.NSold))
		eq("gauge line stock now", m[2], t.Get(check.NCurrentStock))
	}
	for _, l := range lines {
		if !done || !strings.Contains(l, "attempts") {
			for _, m := range reLost.FindAllStringSubmatch(l, -1) {
				eq("lost updates", m[1], t.Get(check.NLostUpdates))
			}
		}
	}
	for _, m := range reStale.FindAllStringSubmatch(screen, -1) {
		eq("stale writes landed", m[1], t.Get(check.NStaleLanded))
		eq("stale writes refused", m[2], t.Get(check.NStaleRefused))
	}
	for _, m := range reTag.FindAllStringSubmatch(screen, -1) {
		eq("gauge violations", m[1], t.Get(check.NViolations))
	}
	if t.SavedByFencing() && reTag.MatchString(screen) {
		bad("the gauge says UNSAFE where fencing refused the stale write and nothing was lost")
	}
	if m := reVerdict.FindStringSubmatch(screen); m != nil {
		eq("verdict attempts", m[1], t.Get(check.NFinished))
		eq("verdict ok", m[2], t.Get(check.NDoneOK))
		eq("verdict lock fails", m[3], t.Get(check.NDoneLock))
		eq("verdict stock fails", m[4], t.Get(check.NDoneStock))
	}
	if m := reOverlaps.FindStringSubmatch(screen); m != nil {
		eq("verdict overlaps", m[1], t.Get(check.NOverlaps))
		eq("verdict lost updates", m[2], t.Get(check.NLostUpdates))
	}
	return errs
}

var reBoxRow = regexp.MustCompile(`║  ([A-Za-z ()]+):\s+(.*?)\s*║`)

// boxNumbers checks the summary box's counts.
func boxNumbers(box string, t *check.Tally) []string {
	var errs []string
	rows := map[string]string{}
	for _, m := range reBoxRow.FindAllStringSubmatch(box, -1) {
		rows[m[1]] = m[2]
	}
	first := func(s string) int {
		n, _ := strconv.Atoi(strings.ReplaceAll(strings.Fields(s + " x")[0], ",", ""))
		return n
	}
	for label, want := range map[string]int{"Total Attempts": t.Get(check.NFinished), "Successful": t.Get(check.NDoneOK),
		"Failed (stock)": t.Get(check.NDoneStock), "Failed (lock)": t.Get(check.NDoneLock), "Lock Calls": t.Get(check.NLockCalls),
		"Overlap Entries": t.Get(check.NOverlaps), "Overlap Pairs": t.Get(check.NOverlapPairs),
		"Lost Updates": t.Get(check.NLostUpdates), "Violations": t.Get(check.NViolations)} {
		got, ok := rows[label]
		if !ok {
			errs = append(errs, fmt.Sprintf("no %q row (tally %d)", label, want))
			continue
		}
		if first(got) != want {
			errs = append(errs, fmt.Sprintf("%s reads %q, the tally %d", label, got, want))
		}
	}
	if got, ok := rows["Stale Writes"]; ok {
		if want := fmt.Sprintf("%d landed, %d refused", t.Get(check.NStaleLanded), t.Get(check.NStaleRefused)); got != want {
			errs = append(errs, fmt.Sprintf("Stale Writes reads %q, the tally %q", got, want))
		}
	} else if t.Get(check.NStaleLanded)+t.Get(check.NStaleRefused) > 0 {
		errs = append(errs, "no Stale Writes row")
	}
	if n := t.Get(check.NRetries); n > 0 && first(rows["Retries"]) != n {
		errs = append(errs, fmt.Sprintf("Retries reads %q, the tally %d", rows["Retries"], n))
	}
	if n := t.Get(check.NWritesRefused); n > 0 && !strings.Contains(rows["Contention"], fmt.Sprintf("%d write(s) refused", n)) {
		errs = append(errs, fmt.Sprintf("Contention reads %q, the tally %d writes refused", rows["Contention"], n))
	}
	if never := rows["Never Got Lock"]; !strings.Contains(never, fmt.Sprintf("(%d;", t.Get(check.NNeverGotLock))) {
		errs = append(errs, fmt.Sprintf("Never Got Lock reads %q, the tally %d", never, t.Get(check.NNeverGotLock)))
	}
	return errs
}

// jsonNumbers checks the JSON report (--json) and the summary's JSON (what
// /state serves).
func jsonNumbers(h event.Header, s *check.Summary, t *check.Tally) []string {
	var errs []string
	compare := func(what string, v any, want map[string]int) {
		b, _ := json.Marshal(v)
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		for field, n := range want {
			if f, _ := got[field].(float64); int(f) != n {
				errs = append(errs, fmt.Sprintf("%s %s is %v, the tally %d", what, field, got[field], n))
			}
		}
	}
	compare("JSON report", check.NewReport(h, s), map[string]int{"overlaps": t.Get(check.NOverlaps),
		"lost_updates": t.Get(check.NLostUpdates), "successes": t.Get(check.NDoneOK), "total_attempts": t.Get(check.NFinished),
		"lock_calls": t.Get(check.NLockCalls), "lock_calls_denied": t.Denied(), "final_stock": t.Get(check.NCurrentStock),
		"indeterminate_ops": t.UnansweredOps(), "gave_up_ops": t.GaveUpOps()})
	compare("/state summary", s, map[string]int{"overlaps": t.Get(check.NOverlaps), "overlap_pairs": t.Get(check.NOverlapPairs),
		"lost_updates": t.Get(check.NLostUpdates), "stale_writes_landed": t.Get(check.NStaleLanded),
		"fence_rejected": t.Get(check.NStaleRefused), "violations": t.Get(check.NViolations), "retries": t.Get(check.NRetries),
		"writes_refused": t.Get(check.NWritesRefused), "never_got_lock": t.Get(check.NNeverGotLock),
		"duplicates": t.Get(check.NDuplicates), "deadlocks": t.Get(check.NDeadlocks)})
	return errs
}
