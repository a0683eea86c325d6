package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// BenchmarkServe200 drives POST /buy from 200 concurrent clients against
// the safe lock on the embedded store (stock enough for every request,
// the scenario's 5 ms between read and write, no retry: a request that
// finds the lock taken gets its 409 at once) and reports requests/s, the
// 99th-percentile latency and how many requests sold.
//
//	go test ./serve -run '^$' -bench Serve200 -benchtime 20000x
func BenchmarkServe200(b *testing.B) {
	for _, retry := range []string{"none", "full-jitter"} {
		b.Run("retry="+retry, func(b *testing.B) { benchServe(b, store.Config{Nodes: 1, Speed: 1, PoolSize: 256}, 200, retry) })
	}
}

// BenchmarkServe200Redis is BenchmarkServe200 on a redis-server the
// benchmark starts on a free port.
//
//	go test ./serve -run '^$' -bench Serve200Redis -benchtime 20000x
func BenchmarkServe200Redis(b *testing.B) {
	srv := storetest.Start(b)
	storetest.QuietRedis()
	for _, retry := range []string{"none", "full-jitter"} {
		b.Run("retry="+retry, func(b *testing.B) { benchServe(b, store.Config{URLs: []string{srv.URL}, PoolSize: 256}, 200, retry) })
	}
}

func benchServe(b *testing.B, sc store.Config, clients int, retry string) {
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers, p.Stock, p.Retry = event.MaxWorkers, 1<<40, retry
	p.RetryBase, p.RetryCap, p.MaxRetries = event.Millis(time.Millisecond), event.Millis(50*time.Millisecond), 100
	s, err := New(context.Background(), Config{
		Store: sc,
		Run:   scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1, Tool: "locklab bench"},
	})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() {
		hs.Close()
		s.Close()
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}}
	var next, sold, refused atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				res, err := client.Post(hs.URL+"/buy", "application/json", nil)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[c] = append(lat[c], time.Since(start))
				switch res.StatusCode {
				case http.StatusOK:
					sold.Add(1)
				case http.StatusConflict:
					refused.Add(1)
				case http.StatusServiceUnavailable: // the round is full: one new round
					r, err := client.Post(fmt.Sprintf("%s/reset?if_round=%d", hs.URL, s.Round()), "application/json", nil)
					if err == nil {
						io.Copy(io.Discard, r.Body)
						r.Body.Close()
					}
				default:
					b.Errorf("POST /buy: %s", res.Status)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(sold.Load())/float64(len(all)), "sold/req")
	b.ReportMetric(float64(refused.Load())/float64(len(all)), "409/req")
}
