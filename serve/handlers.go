package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// endpoint is one route: method, path pattern, the scenario it needs ("" any).
type endpoint struct {
	method, path, scenario string
	h                      http.HandlerFunc
}

func (s *Server) endpoints() []endpoint {
	return []endpoint{
		{"POST", "/buy", "oversell", s.buy},
		{"POST", "/webhook", "webhook", s.webhook},
		{"POST", "/jobs/{id}/run", "queue-double", s.job},
		{"GET", "/state", "", s.state},
		{"POST", "/reset", "", s.reset},
		{"GET", "/events", "", s.events},
		{"GET", "/metrics", "", s.metrics.handler(s).ServeHTTP},
	}
}

// routes registers each endpoint of the server's scenario, with a JSON
// answer for a wrong method, another scenario's endpoint, and any other path.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	sc := s.cfg.Run.Scenario
	var mine []string
	for _, e := range s.endpoints() {
		if e.scenario != "" && e.scenario != sc {
			s.mux.HandleFunc(e.path, func(w http.ResponseWriter, r *http.Request) {
				fail(w, http.StatusNotFound, fmt.Sprintf("%s %s is %s's; this server runs %s: use %s", e.method, e.path, e.scenario, sc, s.workerRoute()))
			})
			continue
		}
		mine = append(mine, e.method+" "+e.path)
		s.mux.Handle(e.method+" "+e.path, s.guard(e.h))
		s.mux.HandleFunc(e.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", e.method)
			fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", e.path, e.method, r.Method))
		})
	}
	list := strings.Join(mine, ", ")
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, fmt.Sprintf("no such endpoint %s %s: want one of %s", r.Method, r.URL.Path, list))
	})
}

// workerRoute is the endpoint whose requests are the workers of the server's scenario.
func (s *Server) workerRoute() string {
	for _, e := range s.endpoints() {
		if e.scenario == s.cfg.Run.Scenario {
			return e.method + " " + e.path
		}
	}
	return "GET /state"
}

// guard bounds the request's body and the server's rate.
func (s *Server) guard(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.limit != nil && !s.limit.Allow() {
			w.Header().Set("Retry-After", "1")
			s.metrics.refused.WithLabelValues("rate").Inc()
			fail(w, http.StatusTooManyRequests, fmt.Sprintf("over the rate limit of %g requests/s: retry in a second", s.cfg.Rate))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		h(w, r)
	})
}

// reply is a worker request's answer: the worker's outcome, as the lab's
// HTTP facade gave it, plus its lane and round.
type reply struct {
	Round        int     `json:"round"`
	Lane         string  `json:"lane"`
	Success      bool    `json:"success"`
	StockBefore  *int64  `json:"stock_before"`
	StockAfter   *int64  `json:"stock_after"`
	LockAcquired bool    `json:"lock_acquired"`
	Error        *string `json:"error"`
	Message      string  `json:"message,omitempty"`
	RetryAfterMs *int64  `json:"retry_after_ms,omitempty"`
	DurationMs   float64 `json:"duration_ms"`
}

// errorReply is every refused request's answer.
type errorReply struct {
	Error string `json:"error"`
	Round int    `json:"round,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func fail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorReply{Error: msg})
}

// readBody decodes the request's JSON object into v; an empty body leaves
// v as it is. It answers a bad body itself and returns false.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", MaxBody))
		return false
	case err != nil:
		fail(w, http.StatusBadRequest, "the request body could not be read: "+err.Error())
		return false
	case len(bytes.TrimSpace(b)) == 0:
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "the request body is not a JSON object: "+err.Error())
		return false
	}
	if dec.More() {
		fail(w, http.StatusBadRequest, "the request body has more than one JSON value")
		return false
	}
	return true
}

// idPattern is what a delivery or job id may be.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

func (s *Server) buy(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if !readBody(w, r, &body) {
		return
	}
	s.work(w, func(o *scenario.Outside) (scenario.Result, error) { return o.Buy() })
}

func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DeliveryID string `json:"delivery_id"`
	}
	if !readBody(w, r, &body) {
		return
	}
	if !idPattern.MatchString(body.DeliveryID) {
		fail(w, http.StatusBadRequest, `POST /webhook needs {"delivery_id": "…"}: 1 to 64 letters, digits or _ . : -`)
		return
	}
	s.work(w, func(o *scenario.Outside) (scenario.Result, error) { return o.Deliver(body.DeliveryID) })
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		fail(w, http.StatusBadRequest, "a job id is 1 to 64 letters, digits or _ . : -")
		return
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", MaxBody))
		return
	}
	s.work(w, func(o *scenario.Outside) (scenario.Result, error) { return o.RunJob(id) })
}

// work runs one worker of the current round and answers with its outcome.
func (s *Server) work(w http.ResponseWriter, do func(*scenario.Outside) (scenario.Result, error)) {
	rd := s.current()
	res, err := do(rd.out)
	if errors.Is(err, scenario.ErrRunEnded) { // a reset came between: the new round takes it
		rd = s.current()
		res, err = do(rd.out)
	}
	switch {
	case errors.Is(err, scenario.ErrRunFull):
		s.metrics.refused.WithLabelValues("full").Inc()
		writeJSON(w, http.StatusServiceUnavailable, errorReply{Round: rd.n,
			Error: fmt.Sprintf("round %d is full (%d requests, one lane each): POST /reset starts a new one", rd.n, rd.out.Lanes())})
		return
	case err != nil:
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	clock := rd.out.Clock()
	rep := reply{Round: rd.n, Lane: res.Lane(), Success: res.Success, LockAcquired: res.LockAcquired,
		DurationMs: math.Round(float64(clock.Real(res.Duration).Microseconds())) / 1000}
	if res.StockBefore >= 0 {
		before, after := res.StockBefore, res.StockBefore
		if res.StockAfter >= 0 {
			after = res.StockAfter
		}
		rep.StockBefore, rep.StockAfter = &before, &after
	}
	if res.Success {
		rep.Message = res.Msg
	} else {
		msg := res.Msg
		rep.Error = &msg
	}
	code := http.StatusOK
	switch {
	case res.Denied():
		code = http.StatusConflict
		real := clock.Real(res.RetryAfter)
		ms := (real + time.Millisecond - 1).Milliseconds()
		rep.RetryAfterMs = &ms
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(real.Seconds())))))
	case res.Lost():
		// The reservation lapsed while the job ran and a redelivery took
		// it: the job's state moved on under this request. Not a server
		// failure, and nothing to retry (no Retry-After).
		code = http.StatusConflict
	case res.Success, res.Code == check.FailStock:
	case res.Code == check.FailCancel:
		code = http.StatusServiceUnavailable
	default: // the server failed the worker: its words are in Error
		code = http.StatusBadGateway
	}
	writeJSON(w, code, rep)
}

// state is the current round as the checker sees it now.
type state struct {
	Round      int                `json:"round"`
	Scenario   string             `json:"scenario"`
	Strategy   string             `json:"strategy"`
	Params     event.Params       `json:"params"`
	Store      string             `json:"store"`
	Lanes      int                `json:"lanes"`
	LanesLimit int                `json:"lanes_limit"`
	Events     int                `json:"events"`
	Summary    *check.Summary     `json:"summary"`
	Locks      lockState          `json:"locks"`
	Live       bool               `json:"live"`
	Clock      map[string]float64 `json:"clock"`
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	rd := s.current()
	run := rd.out.Run
	live := true
	select {
	case <-run.Done():
		live = false
	default:
	}
	c := rd.out.Clock()
	n := run.Log.Len()
	sum, locks := roundState(run.Header, run.Log, n)
	writeJSON(w, http.StatusOK, state{Round: rd.n, Scenario: run.Header.Scenario, Strategy: run.Header.Strategy,
		Params: run.Header.Params, Store: run.Header.Store, Lanes: rd.out.Lanes(), LanesLimit: run.Header.Params.Workers,
		Events: n, Summary: sum, Locks: locks, Live: live,
		Clock: map[string]float64{"t_ms": float64(c.Now().Microseconds()) / 1000, "speed": c.Speed()}})
}

func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IfRound int `json:"if_round"`
	}
	if !readBody(w, r, &body) {
		return
	}
	if q := r.URL.Query().Get("if_round"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			fail(w, http.StatusBadRequest, fmt.Sprintf("if_round %q is not a round number (1 or more)", q))
			return
		}
		body.IfRound = n
	}
	prev := s.current()
	n, err := s.Reset(body.IfRound)
	if err != nil && n == prev.n {
		fail(w, http.StatusServiceUnavailable, "no new round: "+err.Error())
		return
	}
	out := map[string]any{"round": n}
	if n != prev.n {
		sum := prev.out.Run.Summary()
		out["previous"] = map[string]any{"round": prev.n, "verdict": sum.Verdict, "detail": sum.Detail,
			"successes": sum.Successes, "violations": sum.Violations, "keys_deleted": prev.st.Deleted()}
	}
	if err != nil {
		out["warning"] = err.Error()
	}
	writeJSON(w, http.StatusOK, out)
}
