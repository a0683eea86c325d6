package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// stores are the stores every must-show test runs on: the embedded one,
// and a redis-server the test starts (skipped without one).
var stores = []struct {
	name string
	urls func(t *testing.T) []string
}{
	{"embedded", func(*testing.T) []string { return nil }},
	{"redis-server", func(t *testing.T) []string { return []string{storetest.Start(t).URL} }},
}

// start serves sc under strategy with the scenario's defaults changed by
// set, and stops it (deleting its keys) when t ends.
func start(t *testing.T, urls []string, sc, strategy string, set func(p *event.Params)) (*Server, string) {
	t.Helper()
	def, err := scenario.Lookup(sc)
	if err != nil {
		t.Fatal(err)
	}
	p := def.Defaults
	p.Workers = 1000
	if set != nil {
		set(&p)
	}
	s, err := New(context.Background(), Config{
		Store: store.Config{URLs: urls, Nodes: 1, Speed: 1, PoolSize: 256},
		Run:   scenario.Config{Scenario: sc, Strategy: strategy, Params: p, Seed: 1, Tool: "locklab test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s, hs.URL
}

// answer is a reply as a client sees it.
type answer struct {
	code       int
	retryAfter string
	body       map[string]any
	raw        string
}

func (a answer) bool(k string) bool { b, _ := a.body[k].(bool); return b }

func (a answer) num(k string) float64 { f, _ := a.body[k].(float64); return f }

func do(t *testing.T, method, url, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{code: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), raw: string(b)}
	if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		if err := json.Unmarshal(b, &a.body); err != nil {
			t.Fatalf("%s %s: reply is not JSON: %v: %s", method, url, err, b)
		}
	}
	return a
}

// race sends n requests at once, released together, and returns the answers.
func race(t *testing.T, n int, method, url, body string) []answer {
	t.Helper()
	out := make([]answer, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i] = do(t, method, url, body)
		}()
	}
	close(gate)
	wg.Wait()
	return out
}

// waitFor waits until the current round's log holds an event ok accepts
// (a bound for a stuck run, not a timing claim).
func waitFor(t *testing.T, s *Server, ok func(event.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for seen := 0; time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		l := s.Run().Log
		for ; seen < l.Len(); seen++ {
			if ok(l.At(seen)) {
				return
			}
		}
	}
	t.Fatal("the event never came")
}

func count(as []answer, ok func(answer) bool) int {
	n := 0
	for _, a := range as {
		if ok(a) {
			n++
		}
	}
	return n
}
