package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/check/linear"
	"github.com/locklab/locklab/event"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// A CORRECT history is never reported NOT linearizable: every scenario ×
// strategy of the catalogue, over a few seeds (many with LOCKLAB_DEEP=1),
// each log read back from its file and given to check's models. A model
// that calls a correct run's lock, register or sections non-linearizable
// is a false alarm, and fails the test. What porcupine gave up on is
// counted and said. With LOCKLAB_CHECK_LOGS=DIR the logs are kept there,
// for `locklab check` to read one by one; LOCKLAB_CHECK_SEEDS=N runs N
// seeds of each.
func TestCheckHasNoFalseAlarms(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the catalogue")
	}
	seeds := uint64(1) // the plain pass's look; the deep pass sweeps
	if os.Getenv("LOCKLAB_DEEP") == "1" {
		seeds = 12
	}
	if n, err := strconv.ParseUint(os.Getenv("LOCKLAB_CHECK_SEEDS"), 10, 8); err == nil && n > 0 {
		seeds = n
	}
	keep := os.Getenv("LOCKLAB_CHECK_LOGS")
	srv := sweepServers(t)
	type job struct {
		sc       *scenario.Scenario
		strategy string
		v        sweepVariant
		seed     uint64
	}
	var jobs []job
	for _, sc := range scenario.Catalogue() {
		for _, st := range sc.Strategies {
			for _, v := range sweepVariants(sc) {
				p := sc.Defaults
				v.set(&p)
				if sc.Refuses(st, p) != nil {
					continue // a part the strategy cannot play (redsync-quorum's fence)
				}
				for seed := uint64(1); seed <= seeds; seed++ {
					jobs = append(jobs, job{sc, st, v, seed})
				}
			}
		}
	}
	var mu sync.Mutex
	var logs, correct, skipped int
	var gaveUp []string
	work := make(chan job)
	checking := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for range checkRuns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				name := fmt.Sprintf("%s%s-%s-%d", j.sc.Name, j.v.name, j.strategy, j.seed)
				raw, err := sweepRun(j.sc, j.strategy, j.v.set, j.seed, srv)
				if err != nil {
					mu.Lock()
					// A server this pass was not given, or one a busy machine
					// kept from starting in time.
					if strings.Contains(err.Error(), " needs ") || strings.Contains(err.Error(), "cannot use ") {
						skipped++
					} else {
						t.Errorf("%s: %v", name, err)
					}
					mu.Unlock()
					continue
				}
				if keep != "" {
					if err := os.WriteFile(filepath.Join(keep, name+".jsonl"), raw, 0o644); err != nil {
						t.Error(err)
					}
				}
				rec, err := check.ReadRecording(bytes.NewReader(raw))
				if err != nil {
					t.Errorf("%s: the log does not read back: %v", name, err)
					continue
				}
				checking <- struct{}{}
				rep := linear.CheckLog(scenario.WithTraits(rec.Header), check.Slice(rec.Events), checkTimeout, false)
				<-checking
				mu.Lock()
				logs++
				ok := strings.HasPrefix(rec.Summary.Verdict, "CORRECT")
				if ok {
					correct++
				}
				for _, p := range rep.Parts() {
					switch {
					case p.Result == porcupine.Unknown:
						gaveUp = append(gaveUp, name+": "+p.Model+" "+p.Res)
					case p.Result == porcupine.Illegal && ok && p.Model == "lease" && j.sc.Name == "failover":
						// The promoted replica never had the granted key: the
						// store itself broke the lease, whatever the sections
						// did. A true alarm, said, not failed.
						t.Logf("%s: lease %s NOT linearizable (the failover lost its key); the run is %s", name, p.Res, rec.Summary.Verdict)
					case p.Result == porcupine.Illegal && ok:
						t.Errorf("%s: %s %s is NOT linearizable, yet the run is %s", name, p.Model, p.Res, rec.Summary.Verdict)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	t.Logf("%d logs checked (%d CORRECT), %d runs left out for want of a server; gave up on %d partition(s)", logs, correct, skipped, len(gaveUp))
	for _, g := range gaveUp {
		t.Logf("gave up (timeout): %s", g)
	}
}

// sweepVariant is a scenario's parameters changed from its defaults.
type sweepVariant struct {
	name string
	set  func(*event.Params)
}

// sweepVariants are the runs of sc the sweep makes: its defaults, each
// order of deadlock, each part of Redlock, and an oversell that sells.
func sweepVariants(sc *scenario.Scenario) []sweepVariant {
	vs := []sweepVariant{{"", func(*event.Params) {}}}
	switch sc.Name {
	case "deadlock":
		vs = vs[:0]
		for _, o := range event.Orders {
			vs = append(vs, sweepVariant{"-" + o, func(p *event.Params) { p.Order = o }})
		}
	case "redlock":
		vs = vs[:0]
		for _, c := range event.PartChoices() {
			vs = append(vs, sweepVariant{"-" + c.Name, func(p *event.Params) { p.Part = c.Name }})
		}
	case "oversell":
		vs = append(vs, sweepVariant{"-sells", func(p *event.Params) {
			p.Workers, p.Stock, p.Retry, p.MaxRetries = 10, 5, "full-jitter", 20
		}})
	}
	return vs
}

// sweepServers are the servers beyond Redis the sweep runs on: started
// here under LOCKLAB_DEEP=1 (etcd embeds its own members either way).
func sweepServers(t *testing.T) store.Servers {
	if os.Getenv("LOCKLAB_DEEP") != "1" {
		return store.Servers{}
	}
	return store.Servers{Postgres: storetest.StartPostgres(t).URL, MySQL: storetest.StartMariaDB(t).URL,
		Memcached: storetest.StartMemcached(t).Addr}
}

// sweepRun runs one scenario × strategy × seed on the embedded store and
// returns its event log as written.
func sweepRun(sc *scenario.Scenario, strategy string, set func(*event.Params), seed uint64, srv store.Servers) ([]byte, error) {
	p := sc.Defaults
	set(&p)
	if strategy == "redlock" {
		p.Nodes = 5
	}
	st, err := store.Open(context.Background(), store.Config{Nodes: p.Nodes, PoolSize: 64, Speed: checkSpeed, Servers: srv})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var buf bytes.Buffer
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Events: &buf})
	if err != nil {
		return nil, err
	}
	var serverErr *scenario.ServerError
	if err := r.Wait(); err != nil && !errors.As(err, &serverErr) {
		return nil, err
	}
	return buf.Bytes(), nil
}
