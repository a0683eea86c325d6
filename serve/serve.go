// Package serve exposes a locklab run over HTTP: each request to POST /buy,
// POST /webhook or POST /jobs/{id}/run is one worker — one lane — of the
// live run, racing under its lock strategy on its Redis, its events
// appended to the run's one log. GET /state folds that log into the
// checker's verdict, GET /events streams it (Server-Sent Events), GET
// /metrics counts it for Prometheus, and POST /reset starts a new round on
// fresh keys after deleting the last one's.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"golang.org/x/time/rate"
)

// Limits of what one request may ask.
const (
	MaxBody    = 4 << 10 // bytes of a request body
	MaxStreams = 64      // GET /events clients at once
)

// Config says what a server runs.
type Config struct {
	Store store.Config    // each round opens its own store with this
	Run   scenario.Config // scenario, strategy, params (Workers: lanes per round), seed, tool
	// Events, if set, gives the writer round n's event log is streamed to;
	// the server closes it when the round ends.
	Events func(round int) (io.WriteCloser, error)
	// Rate bounds the requests per second the server accepts, all clients
	// together (Burst at once); 0: no bound.
	Rate  float64
	Burst int
	// Grace is how long closing waits for the requests in flight before
	// it stops them (default 5s).
	Grace time.Duration
	// OnRound, if set, is told of each round as it opens (the first one
	// too), from the goroutine that opens it: a view follows the rounds.
	OnRound func(n int, run *scenario.Run)
	// AllowHosts are names (NAME, or NAME:PORT) requests may give as
	// their Host, beside the address the server answers on.
	AllowHosts []string
}

// Server serves one run at a time (a round) over HTTP.
type Server struct {
	cfg      Config
	limit    *rate.Limiter
	metrics  *metrics
	streams  chan struct{}
	mux      *http.ServeMux
	base     context.Context // what rounds' runs are started with (never cancelled: Close ends them)
	quit     chan struct{}   // closed when the server shuts down
	quitOnce sync.Once

	resetMu sync.Mutex // one reset at a time
	mu      sync.RWMutex
	round   *round
	closed  bool
}

// round is one run: its store, its workers from outside, its event file.
type round struct {
	n      int
	st     *store.Store
	out    *scenario.Outside
	events io.WriteCloser
}

// New opens the first round; ctx bounds only the opening. Close ends it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Second
	}
	s := &Server{cfg: cfg, metrics: newMetrics(), streams: make(chan struct{}, MaxStreams),
		base: context.WithoutCancel(ctx), quit: make(chan struct{})}
	if cfg.Rate > 0 {
		s.limit = rate.NewLimiter(rate.Limit(cfg.Rate), max(cfg.Burst, 1))
	}
	r, err := s.open(ctx, 1)
	if err != nil {
		return nil, err
	}
	s.round = r
	s.routes()
	if cfg.OnRound != nil {
		cfg.OnRound(r.n, r.out.Run)
	}
	return s, nil
}

// open starts round n on a store of its own.
func (s *Server) open(ctx context.Context, n int) (*round, error) {
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := store.Open(octx, s.cfg.Store)
	if err != nil {
		return nil, err
	}
	r := &round{n: n, st: st}
	cfg := s.cfg.Run
	if s.cfg.Events != nil {
		if r.events, err = s.cfg.Events(n); err != nil {
			st.Close()
			return nil, err
		}
		cfg.Events = r.events
	}
	if r.out, err = scenario.Open(s.base, st, cfg); err != nil {
		r.closeFiles()
		st.Close()
		return nil, err
	}
	return r, nil
}

func (r *round) closeFiles() error {
	if r.events == nil {
		return nil
	}
	return r.events.Close()
}

// end lets the round's workers in flight finish (for at most grace), takes
// its verdict and deletes its keys.
func (r *round) end(grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- r.out.Close() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(grace):
		r.out.Run.Stop()
		err = <-done
	}
	var se *scenario.ServerError
	if errors.As(err, &se) || errors.Is(err, context.Canceled) {
		err = nil // the round's verdict says so; the server goes on
	}
	return errors.Join(err, r.closeFiles(), r.st.Close())
}

// current is the round requests go to now.
func (s *Server) current() *round {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.round
}

// Round is the number of the current round.
func (s *Server) Round() int { return s.current().n }

// Lanes is how many requests the current round has taken as workers.
func (s *Server) Lanes() int { return s.current().out.Lanes() }

// Run is the current round's run.
func (s *Server) Run() *scenario.Run { return s.current().out.Run }

// Reset starts a new round on fresh keys; the last round's workers in
// flight finish first, then its keys are deleted. With ifRound > 0 it
// does nothing unless ifRound is the current round (so many clients that
// each see a full round start one new round, not many).
func (s *Server) Reset(ifRound int) (int, error) {
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	old := s.current()
	if ifRound > 0 && ifRound != old.n {
		return old.n, nil
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return old.n, errClosed
	}
	r, err := s.open(s.base, old.n+1)
	if err != nil {
		return old.n, err
	}
	s.mu.Lock()
	s.round = r
	s.mu.Unlock()
	if s.cfg.OnRound != nil {
		s.cfg.OnRound(r.n, r.out.Run)
	}
	s.metrics.catchUp(old.out.Run.Log) // the old round's last events are counted
	err = old.end(s.cfg.Grace)
	s.metrics.catchUp(old.out.Run.Log)
	s.metrics.forget(old.out.Run.Log)
	s.metrics.rounds.Inc()
	return r.n, err
}

var errClosed = errors.New("the server is shutting down")

// Close ends the current round (its verdict, its keys deleted). Call it
// after the HTTP server has stopped taking requests.
func (s *Server) Close() error {
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	r := s.round
	s.mu.Unlock()
	s.quitOnce.Do(func() { close(s.quit) })
	return r.end(s.cfg.Grace)
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.local(s.mux) }

// Serve answers on l until ctx ends, then shuts down gracefully: event
// streams end, requests in flight finish (for at most the grace period),
// the round takes its verdict and its keys are deleted.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10, ErrorLog: log.New(io.Discard, "", 0)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.quitOnce.Do(func() { close(s.quit) }) // event streams end
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Grace)
		if serr := srv.Shutdown(sctx); serr != nil {
			err = fmt.Errorf("shutting down: %w", serr)
			srv.Close()
		}
		cancel()
		<-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}
