package serve

import (
	"bufio"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
)

// Without a lock, 50 concurrent purchases of one item sell it more than
// once. The read-to-write window (--delay 3s) is far longer than the
// requests take to arrive, so the race is certain, not lucky.
func TestNoLockOversells(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, url := start(t, st.urls(t), "oversell", "none", func(p *event.Params) {
				p.Stock, p.Delay = 1, event.Millis(1500*time.Millisecond)
			})
			as := race(t, 50, "POST", url+"/buy", "")
			sold := count(as, func(a answer) bool { return a.code == 200 && a.bool("success") })
			if sold <= 1 {
				t.Fatalf("%d of 50 purchases of 1 item went through, want more than 1", sold)
			}
			for _, a := range as {
				if a.code != 200 {
					t.Fatalf("a purchase got %d: %s", a.code, a.raw)
				}
				if a.bool("success") && (a.num("stock_before") != 1 || a.num("stock_after") != 0) {
					t.Errorf("a sale went from stock %v to %v, want 1 to 0", a.body["stock_before"], a.body["stock_after"])
				}
			}
			sum := s.Run().Summary()
			if !sum.Oversold || sum.Successes != sold {
				t.Errorf("the checker says oversold %v, %d sales; the replies %d", sum.Oversold, sum.Successes, sold)
			}
			state := do(t, "GET", url+"/state", "")
			if v := state.body["summary"].(map[string]any)["verdict"]; !strings.Contains(v.(string), "OVERSOLD") {
				t.Errorf("GET /state verdict %q, want OVERSOLD", v)
			}
		})
	}
}

// With the safe lock and full-jitter retries, 50 concurrent purchases of 5
// items sell exactly 5.
func TestSafeLockSellsExactly(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, url := start(t, st.urls(t), "oversell", "safe", func(p *event.Params) {
				p.Stock, p.Retry, p.MaxRetries = 5, "full-jitter", 1000
				p.RetryBase, p.RetryCap = event.Millis(5*time.Millisecond), event.Millis(100*time.Millisecond)
			})
			as := race(t, 50, "POST", url+"/buy", "")
			sold := count(as, func(a answer) bool { return a.code == 200 && a.bool("success") })
			if sold != 5 {
				for _, a := range as {
					t.Log(a.code, a.raw)
				}
				t.Fatalf("%d of 50 purchases of 5 items went through, want exactly 5", sold)
			}
			sum := s.Run().Summary()
			if sum.Violations != 0 || sum.Successes != 5 {
				t.Errorf("the checker: %d sales, %d violations; want 5 and 0", sum.Successes, sum.Violations)
			}
		})
	}
}

// A delivery that finds the lock taken is refused at once: 409, with a
// Retry-After from the lock's remaining PTTL.
func TestFailFastConflict(t *testing.T) {
	t.Parallel()
	const ttl = 5 * time.Second
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, url := start(t, st.urls(t), "webhook", "fail-fast", func(p *event.Params) {
				p.Delay, p.TTL = event.Millis(time.Second), event.Millis(ttl)
			})
			first := make(chan answer, 1)
			go func() { first <- do(t, "POST", url+"/webhook", `{"delivery_id":"evt_1"}`) }()
			waitFor(t, s, func(e event.Event) bool { return e.Kind == event.KindAcquired })
			a := do(t, "POST", url+"/webhook", `{"delivery_id":"evt_1"}`)
			if a.code != http.StatusConflict {
				t.Fatalf("the second delivery got %d, want 409: %s", a.code, a.raw)
			}
			secs, err := strconv.Atoi(a.retryAfter)
			if err != nil || secs < 1 || secs > int(math.Ceil(ttl.Seconds())) {
				t.Errorf("Retry-After %q, want 1 to %d seconds", a.retryAfter, int(ttl.Seconds()))
			}
			if ms := a.num("retry_after_ms"); ms <= 0 || ms > float64(ttl.Milliseconds()) {
				t.Errorf("retry_after_ms %v, want within the lock's TTL (%v)", ms, ttl)
			}
			if a.bool("lock_acquired") || a.body["error"] == nil {
				t.Errorf("a refused delivery: %s", a.raw)
			}
			if f := <-first; f.code != 200 || !f.bool("success") || !f.bool("lock_acquired") {
				t.Errorf("the first delivery: %d %s", f.code, f.raw)
			}
			// A different delivery takes its own lock.
			if b := do(t, "POST", url+"/webhook", `{"delivery_id":"evt_2"}`); b.code != 200 {
				t.Errorf("another delivery got %d: %s", b.code, b.raw)
			}
			if sum := s.Run().Summary(); sum.Duplicates != 0 {
				t.Errorf("%d duplicate credits with fail-fast", sum.Duplicates)
			}
		})
	}
}

// Without a lock a duplicate delivery credits twice, and the checker says so.
func TestWebhookNoLockDuplicates(t *testing.T) {
	t.Parallel()
	s, url := start(t, nil, "webhook", "none", func(p *event.Params) { p.Delay = event.Millis(time.Second) })
	as := race(t, 3, "POST", url+"/webhook", `{"delivery_id":"pay_7"}`)
	if n := count(as, func(a answer) bool { return a.code == 200 }); n != 3 {
		t.Fatalf("%d of 3 deliveries answered 200", n)
	}
	if sum := s.Run().Summary(); sum.Duplicates == 0 {
		t.Errorf("no duplicate credit found: %+v", sum)
	}
}

// A job reserved by one request is refused to the next (409, the
// reservation's PTTL), runs once, and is not run again once done.
func TestJobReservation(t *testing.T) {
	t.Parallel()
	s, url := start(t, nil, "queue-double", "plain", func(p *event.Params) {
		p.TTL, p.Work = event.Millis(5*time.Second), event.Millis(time.Second)
	})
	first := make(chan answer, 1)
	go func() { first <- do(t, "POST", url+"/jobs/42/run", "") }()
	waitFor(t, s, func(e event.Event) bool { return e.Kind == event.KindAcquired })
	if a := do(t, "POST", url+"/jobs/42/run", ""); a.code != http.StatusConflict || a.retryAfter == "" {
		t.Errorf("a reserved job: %d (Retry-After %q) %s", a.code, a.retryAfter, a.raw)
	}
	if a := <-first; a.code != 200 || !a.bool("success") {
		t.Errorf("the job's run: %d %s", a.code, a.raw)
	}
	if a := do(t, "POST", url+"/jobs/42/run", ""); a.code != 200 || a.bool("success") {
		t.Errorf("a done job: %d %s", a.code, a.raw)
	}
	if sum := s.Run().Summary(); sum.Duplicates != 0 || sum.Violations != 0 {
		t.Errorf("the checker: %+v", sum)
	}
}

// Bad requests get a 4xx and a JSON error, and become no worker.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	s, url := start(t, nil, "oversell", "safe", nil)
	for _, c := range []struct {
		method, path, body string
		code               int
	}{
		{"POST", "/buy", "{not json", 400},
		{"POST", "/buy", `{"a":1} {"b":2}`, 400},
		{"POST", "/buy", `{"pad":"` + strings.Repeat("x", MaxBody) + `"}`, 413},
		{"GET", "/buy", "", 405},
		{"POST", "/state", "", 405},
		{"POST", "/webhook", `{"delivery_id":"x"}`, 404},
		{"POST", "/jobs/1/run", "", 404},
		{"GET", "/nope", "", 404},
		{"POST", "/reset?if_round=zero", "", 400},
	} {
		a := do(t, c.method, url+c.path, c.body)
		if a.code != c.code || a.body["error"] == nil {
			t.Errorf("%s %s: %d %s, want %d and a JSON error", c.method, c.path, a.code, a.raw, c.code)
		}
	}
	if n := s.current().out.Lanes(); n != 0 {
		t.Errorf("bad requests made %d workers", n)
	}
}

// POST /reset starts a new round on fresh keys and deletes the last one's;
// if_round makes many resets of one full round one.
func TestReset(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, url := start(t, st.urls(t), "oversell", "safe", func(p *event.Params) { p.Workers = 2 })
			oldPrefix := s.current().st.Prefix()
			client := s.current().st.Client()
			for range 2 {
				do(t, "POST", url+"/buy", "")
			}
			if a := do(t, "POST", url+"/buy", ""); a.code != http.StatusServiceUnavailable {
				t.Fatalf("a full round: %d %s", a.code, a.raw)
			}
			as := race(t, 5, "POST", url+"/reset", `{"if_round":1}`)
			for _, a := range as {
				if a.code != 200 || a.num("round") != 2 {
					t.Fatalf("reset: %d %s", a.code, a.raw)
				}
			}
			if s.Round() != 2 {
				t.Fatalf("round %d after five resets of round 1, want 2", s.Round())
			}
			if st.name == "redis-server" {
				if keys, err := client.Keys(t.Context(), oldPrefix+"*").Result(); err == nil && len(keys) > 0 {
					t.Errorf("round 1's keys are left: %v", keys)
				}
			}
			if a := do(t, "POST", url+"/buy", ""); a.code != 200 || !a.bool("success") || a.num("round") != 2 {
				t.Errorf("a purchase in round 2: %d %s", a.code, a.raw)
			}
		})
	}
}

// GET /events streams the log; GET /metrics counts it.
func TestEventsAndMetrics(t *testing.T) {
	t.Parallel()
	_, url := start(t, nil, "oversell", "none", func(p *event.Params) { p.Stock, p.Delay = 1, event.Millis(1500*time.Millisecond) })
	res, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("GET /events: %s", ct)
	}
	race(t, 3, "POST", url+"/buy", "")
	sc := bufio.NewScanner(res.Body)
	var round, done bool
	for sc.Scan() && !(round && done) {
		line := sc.Text()
		round = round || line == "event: round"
		done = done || strings.HasPrefix(line, "data: ") && strings.Contains(line, `"kind":"done"`)
	}
	if !round || !done {
		t.Fatalf("the stream lacks a round event (%v) or a done event (%v)", round, done)
	}
	m := do(t, "GET", url+"/metrics", "")
	if v := metric(t, m.raw, `locklab_violations_total{code="oversold"}`); v < 1 {
		t.Errorf("oversold violations counted: %v", v)
	}
	if v := metric(t, m.raw, `locklab_workers_total{outcome="ok"}`) + metric(t, m.raw, `locklab_workers_total{outcome="stock"}`); v != 3 {
		t.Errorf("workers counted: %v, want 3", v)
	}
	// With a lock: lock calls and hold times.
	_, url = start(t, nil, "oversell", "safe", func(p *event.Params) { p.Stock = 5 })
	for range 3 {
		do(t, "POST", url+"/buy", "")
	}
	m = do(t, "GET", url+"/metrics", "")
	for name, want := range map[string]float64{"locklab_lock_calls_total": 3, "locklab_lock_hold_seconds_count": 3, "locklab_lock_denials_total": 0} {
		if v := metric(t, m.raw, name); v != want {
			t.Errorf("%s %v, want %v", name, v, want)
		}
	}
}

// metric is the value of the sample named name in a Prometheus text page.
func metric(t *testing.T, page, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in:\n%s", name, page)
	return 0
}
