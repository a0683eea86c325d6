package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	dto "github.com/prometheus/client_model/go"
)

// The oracle's serve half: scraped at 20 playheads while a run's log
// grows, /metrics' counters and histogram and what /state serves (its
// summary and its locks) equal the tally folded afresh from the events up
// to the playhead, and each other.
func TestOracleMetricsAndStateShowTheTally(t *testing.T) {
	for _, c := range []struct{ sc, strategy string }{{"oversell", "none"}, {"oversell", "redis-optimistic"},
		{"ttl-expiry", "fenced"}, {"retry", "fixed"}, {"webhook", "none"}, {"redlock", "redlock"},
		{"queue-double", "plain"}, {"renewal", "watchdog"}, {"crash", "safe"}, {"naive-flaws", "safe"}} {
		sc, err := scenario.Lookup(c.sc)
		if err != nil {
			t.Fatal(err)
		}
		p := sc.Defaults
		if c.strategy == "redlock" {
			p.Nodes = max(p.Nodes, 5)
		}
		h, evs := simulated(t, scenario.Config{Scenario: c.sc, Strategy: c.strategy, Seed: 1, Params: p})
		m, l := newMetrics(), event.NewLog(nil, nil)
		for i := range 20 {
			k := (len(evs) - 1) * i / 19
			for l.Len() <= k {
				l.Append(evs[l.Len()])
			}
			m.catchUp(l)
			want := check.TallyOf(check.Slice(evs[:k+1]))
			got := scrape(t, m)
			for name, n := range map[string]int{"lock_calls_total": want.Get(check.NLockCalls), "lock_denials_total": want.Denied(),
				"lock_retries_total": want.Get(check.NRetries), "violations_total{code=overlap}": want.Get(check.NOverlaps),
				"violations_total{code=stale_write_landed}": want.Get(check.NStaleLanded), "violations_total{code=oversold}": want.Get(check.NOversold),
				"violations_total{code=duplicate}": want.Get(check.NDuplicates), "workers_total{outcome=ok}": want.Get(check.NDoneOK),
				"workers_total{outcome=lock}": want.Get(check.NDoneLock), "workers_total{outcome=stale}": want.Get(check.NDoneStale),
				"round_lost_writes{definition=lost_updates}":        want.Get(check.NLostUpdates),
				"round_lost_writes{definition=stale_writes_landed}": want.Get(check.NStaleLanded),
				"lock_ttl_lapses_total":                             want.Get(check.NLapses), "lock_hold_seconds": want.Get(check.NHolds)} {
				if got[name] != n {
					t.Errorf("%s/%s at event %d: /metrics %s = %d, the tally %d", c.sc, c.strategy, k, name, got[name], n)
				}
			}
			if d := holdSum(t, m) - want.HoldTotal().Seconds(); d > 1e-9 || d < -1e-9 {
				t.Errorf("%s/%s at event %d: /metrics hold seconds %v, the tally %v", c.sc, c.strategy, k, holdSum(t, m), want.HoldTotal().Seconds())
			}
			var st map[string]any
			summary, locks := roundState(h, l, l.Len())
			b, _ := json.Marshal(state{Summary: summary, Locks: locks})
			_ = json.Unmarshal(b, &st)
			for field, name := range map[string]string{"holds": "lock_hold_seconds", "ttl_lapses": "lock_ttl_lapses_total"} {
				if f, _ := st["locks"].(map[string]any)[field].(float64); int(f) != got[name] {
					t.Errorf("%s/%s at event %d: /state locks.%s = %v, /metrics %s = %d", c.sc, c.strategy, k, field, f, name, got[name])
				}
			}
			if f, _ := st["locks"].(map[string]any)["hold_seconds_sum"].(float64); f != holdSum(t, m) {
				t.Errorf("%s/%s at event %d: /state hold seconds %v, /metrics %v", c.sc, c.strategy, k, f, holdSum(t, m))
			}
			sum, _ := st["summary"].(map[string]any)
			for field, n := range map[string]int{"lost_updates": want.Get(check.NLostUpdates), "stale_writes_landed": want.Get(check.NStaleLanded),
				"violations": want.Get(check.NViolations), "lock_calls_denied": want.Denied(), "overlaps": want.Get(check.NOverlaps)} {
				if f, _ := sum[field].(float64); int(f) != n {
					t.Errorf("%s/%s at event %d: /state %s = %v, the tally %d", c.sc, c.strategy, k, field, sum[field], n)
				}
				if name := map[string]string{"lost_updates": "round_lost_writes{definition=lost_updates}"}[field]; name != "" && got[name] != n {
					t.Errorf("%s/%s at event %d: /metrics and /state disagree on %s", c.sc, c.strategy, k, field)
				}
			}
		}
	}
}

// simulated runs cfg on a fresh embedded store and reads its log back.
func simulated(t *testing.T, cfg scenario.Config) (event.Header, []event.Event) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Nodes: cfg.Params.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	cfg.Events = &buf
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	ld, err := scenario.LoadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Header, ld.Log.Events()
}

// scrape is the registry's counters and gauges: name{label=value} → value.
func scrape(t *testing.T, m *metrics) map[string]int {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			name := strings.TrimPrefix(f.GetName(), "locklab_")
			for _, lp := range mt.GetLabel() {
				name += "{" + lp.GetName() + "=" + lp.GetValue() + "}"
			}
			out[name] = value(mt)
		}
	}
	return out
}

func value(m *dto.Metric) int {
	switch {
	case m.Counter != nil:
		return int(m.Counter.GetValue())
	case m.Gauge != nil:
		return int(m.Gauge.GetValue())
	case m.Histogram != nil:
		return int(m.Histogram.GetSampleCount())
	}
	return 0
}

// holdSum is the sum of /metrics' lock hold times, in seconds.
func holdSum(t *testing.T, m *metrics) float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "locklab_lock_hold_seconds" {
			return f.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	t.Fatal("no locklab_lock_hold_seconds")
	return 0
}
