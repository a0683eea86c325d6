package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/bsm/redislock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkServeBare compares POST /buy on the safe lock with a minimal
// net/http handler making the same Redis calls through bsm/redislock (SET
// NX PX; on a refusal PTTL and a 409; else GET the stock, the scenario's
// 5 ms, SET it, the release script), interleaved in rounds on one
// redis-server, at 50 and 200 concurrent clients. x-bare is serve's
// requests/s over the bare handler's, the median of the rounds' ratios;
// x-p99 is serve's 99th-percentile latency over the bare one's.
//
//	go test ./serve -run '^$' -bench ServeBare -benchtime 7x
func BenchmarkServeBare(b *testing.B) {
	srv := storetest.Start(b)
	storetest.QuietRedis()
	for _, clients := range []int{50, 200} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s := newBenchServer(b, store.Config{URLs: []string{srv.URL}, PoolSize: 256})
			ours := httptest.NewServer(s.Handler())
			defer ours.Close()
			bare := httptest.NewServer(bareBuy(b, srv.URL))
			defer bare.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: 2 * clients}}
			lat := [2][][]time.Duration{make([][]time.Duration, clients), make([][]time.Duration, clients)}
			post := func(k int, url string, reset func()) storetest.Contender {
				return storetest.Contender{Name: []string{"serve", "net/http"}[k], New: func(i int) func() error {
					return func() error {
						for {
							t := time.Now()
							code, err := postBuy(client, url)
							if err != nil {
								return err
							}
							switch code {
							case http.StatusOK, http.StatusConflict:
								lat[k][i] = append(lat[k][i], time.Since(t))
								return nil
							case http.StatusServiceUnavailable:
								reset() // not a purchase: again, in the new round
							default:
								return fmt.Errorf("POST /buy: %d", code)
							}
						}
					}
				}}
			}
			var mu sync.Mutex
			reset := func() { // the round is full: one new round
				mu.Lock()
				defer mu.Unlock()
				if _, err := s.Reset(s.Round()); err != nil {
					b.Log(err)
				}
			}
			r := storetest.Interleave(b, clients, 300*time.Millisecond, post(0, ours.URL, reset), post(1, bare.URL, func() {}))
			r.Report(b, 1, 1)
			p99 := [2]float64{}
			for k := range lat {
				all := slices.Concat(lat[k]...)
				slices.Sort(all)
				if len(all) > 0 {
					p99[k] = float64(all[len(all)*99/100].Microseconds()) / 1000
				}
			}
			b.ReportMetric(p99[0], "serve-p99-ms")
			b.ReportMetric(p99[1], "net/http-p99-ms")
			if p99[1] > 0 {
				b.ReportMetric(p99[0]/p99[1], "x-p99")
			}
			b.Log(r.Spread(0, 1, 1))
		})
	}
}

// newBenchServer is serve's oversell on the safe lock: stock for every
// request, no retry (a request that finds the lock taken gets its 409).
func newBenchServer(b *testing.B, sc store.Config) *Server {
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers, p.Stock, p.Retry = event.MaxWorkers, 1<<40, "none"
	s, err := New(context.Background(), Config{Store: sc,
		Run: scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1, Tool: "locklab bench"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func postBuy(c *http.Client, url string) (int, error) {
	res, err := c.Post(url+"/buy", "application/json", nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// bareBuy is the minimal handler: the oversell purchase's Redis calls and
// nothing else.
func bareBuy(b *testing.B, url string) http.Handler {
	opt, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	opt.PoolSize = 256
	c := redis.NewClient(opt)
	b.Cleanup(func() { c.Close() })
	locker := redislock.New(c)
	ctx := context.Background()
	if err := c.Set(ctx, "bare:stock", 1<<40, 0).Err(); err != nil {
		b.Fatal(err)
	}
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /buy", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		l, err := locker.Obtain(ctx, "bare:lock", 10*time.Second, nil)
		if err == redislock.ErrNotObtained {
			pttl, _ := c.PTTL(ctx, "bare:lock").Result()
			reply(w, http.StatusConflict, map[string]any{"error": "locked", "retry_after_ms": pttl.Milliseconds()})
			return
		}
		if err != nil {
			reply(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
			return
		}
		defer l.Release(context.WithoutCancel(ctx))
		v, err := c.Get(ctx, "bare:stock").Int64()
		if err != nil {
			reply(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
			return
		}
		time.Sleep(5 * time.Millisecond)
		if err := c.Set(ctx, "bare:stock", v-1, 0).Err(); err != nil {
			reply(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
			return
		}
		reply(w, http.StatusOK, map[string]any{"success": true, "stock_before": v, "stock_after": v - 1})
	})
	return mux
}
