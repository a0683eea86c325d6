package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// TestServeIsALocalLab: requests that name another host (DNS rebinding),
// state changes sent by a page of another origin, and bodies that are not
// declared JSON are refused before they reach the run; curl's and k6's
// requests, and the page of the server's own origin, are answered.
func TestServeIsALocalLab(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers = 100
	s, err := New(context.Background(), Config{
		Store:      store.Config{Nodes: 1, Speed: 1, PoolSize: 16},
		Run:        scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 1, Tool: "locklab test"},
		AllowHosts: []string{"lab.example", "pinned.example:1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	hostport := strings.TrimPrefix(hs.URL, "http://")
	port := hostport[strings.LastIndex(hostport, ":")+1:]
	for _, tc := range []struct {
		name, method, path, host string
		header                   map[string]string
		body                     string
		want                     int
	}{
		{"the reproduction: a cross-site text/plain reset", "POST", "/reset", "", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, "{}", 403},
		{"a rebound name reads the state", "GET", "/state", "evil.example:" + port, nil, "", 421},
		{"a rebound name buys", "POST", "/buy", "evil.example:" + port, nil, "", 421},
		{"a rebound name streams events", "GET", "/events", "evil.example:" + port, nil, "", 421},
		{"a rebound name reads metrics", "GET", "/metrics", "evil.example", nil, "", 421},
		{"localhost on another port", "GET", "/state", "localhost:1", nil, "", 421},
		{"an allowed name on another port", "GET", "/state", "pinned.example:" + port, nil, "", 421},
		{"a cross-site page with a JSON body", "POST", "/buy", "", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, "{}", 403},
		{"a cross-site page by its Referer", "POST", "/reset", "", map[string]string{"Referer": "http://evil.example/x"}, "", 403},
		{"a sandboxed page", "POST", "/buy", "", map[string]string{"Origin": "null"}, "", 403},
		{"the page of this origin on localhost", "POST", "/buy", "localhost:" + port, map[string]string{"Origin": "http://localhost:" + port}, "", 200},
		{"a form post", "POST", "/buy", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "a=1", 415},
		{"a text/plain body", "POST", "/buy", "", map[string]string{"Content-Type": "text/plain"}, "{}", 415},
		{"a body without a type", "POST", "/buy", "", nil, "{}", 415},
		{"curl -X POST", "POST", "/buy", "", nil, "", 200},
		{"a JSON body", "POST", "/buy", "", map[string]string{"Content-Type": "application/json; charset=utf-8"}, "{}", 200},
		{"the state at the address", "GET", "/state", "", nil, "", 200},
		{"the state on localhost", "GET", "/state", "localhost:" + port, nil, "", 200},
		{"the state on an allowed name", "GET", "/state", "LAB.example.:" + port, nil, "", 200},
		{"the state on an allowed name:port", "GET", "/state", "pinned.example:1", nil, "", 421}, // the port is the connection's
	} {
		req, err := http.NewRequest(tc.method, hs.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if tc.path == "/events" {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req = req.WithContext(ctx)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
	if n := s.Lanes(); n != 3 {
		t.Errorf("%d requests became workers, want the 3 allowed buys", n)
	}
}
