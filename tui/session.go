package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/levels"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"github.com/locklab/locklab/store"
)

// runSpec is what to run.
type runSpec struct {
	Scenario string
	Strategy string
	Params   event.Params
	Seed     uint64
	Speed    float64          // the embedded clock's opening speed
	Faults   []scenario.Timed // planned (a schedule's, or pressed before a restart)
	Steps    []scenario.Step  // chosen by hand before
	Manual   bool             // the scheduler mode: the person decides the steps
	From     uint64           // in the scheduler mode, the first step to ask about
	Level    *levels.Level    // the level being played, if any
}

// session is one run on screen: live (with its store) or replayed.
type session struct {
	spec    runSpec
	header  event.Header
	log     *event.Log
	run     *scenario.Run
	store   *store.Store
	events  *files.Output
	summary *check.Summary
	replay  string            // the file, when replaying
	loading *scenario.Loading // a replay still being read, until it is done
	loadErr error             // what stopped a replay's reading early
	kind    store.Kind        // where the run lived, kept after its store is closed
	left    error             // what closing the store could not delete, if anything
	man     *manual           // the scheduler mode's, when on
	// summarize, when set, summarises the finished run instead of its
	// own fold: a room's round is summarised once for every view.
	summarize func() *check.Summary
	// note is what the run view says first: why the pace asked for was
	// not taken.
	note string
}

// replicaLag is how far each embedded node's replica trails it, so a
// failover injected from the keyboard loses the writes of that last stretch.
const replicaLag = 250 * time.Millisecond

// startSession opens a store and starts a run on it.
func startSession(opts *Options, spec runSpec) (*session, error) {
	var note string
	if why := scenario.KeepsOneX(spec.Strategy); why != "" && spec.Speed != 1 && len(opts.URLs) == 0 && opts.Topology == "" {
		spec.Speed, note = 1, why
	}
	s := &session{spec: spec, note: note}
	cfg := scenario.Config{Scenario: spec.Scenario, Strategy: spec.Strategy, Params: spec.Params,
		Seed: spec.Seed, Tool: opts.Tool, Realtime: opts.Realtime, Paced: !spec.Manual, Faults: spec.Faults, Steps: spec.Steps, Branchable: true}
	if spec.Manual {
		lanes := make([]string, spec.Params.Workers)
		for i := range lanes {
			lanes[i] = check.WorkerName(int32(i))
		}
		s.man = newManual(lanes, spec.From, spec.Level)
		cfg.Steer = s.man.steer
	}
	var events func() (io.Writer, error)
	if opts.Events != "" {
		events = func() (io.Writer, error) {
			f, err := files.Create(opts.Events)
			if err != nil {
				return nil, fmt.Errorf("cannot write the event log: %w", err)
			}
			s.events = f
			return f, nil
		}
	}
	where := launch.Where{URLs: opts.URLs, Servers: opts.Servers, Topology: opts.Topology, Speed: spec.Speed,
		Slowmo: opts.Slowmo, ReplicaLag: replicaLag, OpenWithin: 3 * time.Second}
	run, st, err := launch.Start(context.Background(), where, cfg, events)
	if err != nil {
		s.stop()        // the scheduler's and the event log's, if they were made
		return nil, err // the server's words and a hint, never a password
	}
	s.run, s.store, s.kind = run, st, st.Kind()
	s.header, s.log = run.Header, run.Log
	return s, nil
}

// replaySession shows a recorded log.
func replaySession(name string, l *scenario.Loaded) *session {
	s := &session{header: l.Header, log: l.Log, replay: name}
	s.spec = runSpec{Scenario: l.Header.Scenario, Strategy: l.Header.Strategy, Params: l.Header.Params, Seed: l.Header.Seed}
	s.summary = scenario.Summarize(l.Header, l.Log)
	return s
}

// loadingSession shows a recorded log while it is still being read: its
// summary (and so the verdict) comes once the whole log is read.
func loadingSession(name string, ld *scenario.Loading) *session {
	s := &session{header: ld.Header, log: ld.Log, replay: name, loading: ld}
	s.spec = runSpec{Scenario: ld.Header.Scenario, Strategy: ld.Header.Strategy, Params: ld.Header.Params, Seed: ld.Header.Seed}
	return s
}

// live reports whether workers are (or were) running behind this session.
func (s *session) live() bool { return s.run != nil }

// clock is the live run's clock, or nil.
func (s *session) clock() *store.Clock {
	if s.store == nil {
		return nil
	}
	return s.store.Clock()
}

// embedded reports whether pause and speed act on the whole world.
func (s *session) embedded() bool { return s.kind == store.Embedded }

// finished reports whether the run has ended, and computes its summary once.
func (s *session) finished() bool {
	if ld := s.loading; ld != nil {
		select {
		case <-ld.Done():
			// A log cut short by a bad line has no verdict: the view
			// says why instead.
			if s.loadErr = ld.Err(); s.loadErr == nil {
				s.summary = ld.Summary()
			}
			s.loading = nil
		default:
			return false
		}
	}
	if s.summary != nil {
		return true
	}
	if s.run == nil {
		return true
	}
	select {
	case <-s.run.Done():
		if s.summarize != nil {
			s.summary = s.summarize()
		} else {
			s.summary = s.run.Summary()
		}
		s.stop() // the run is over: delete its keys now, keep the log
		return true
	default:
		return false
	}
}

// stop ends the run, deletes its keys and closes everything. Safe to call
// more than once.
func (s *session) stop() {
	if s.man != nil {
		s.man.close()
	}
	if s.run != nil && s.store != nil {
		if c := s.clock(); c.Paused() {
			_ = c.SetSpeed(1) // let cancelled workers wake
		}
		s.run.Stop()
		select {
		case <-s.run.Done():
		default:
			// Quit mid-run: a server that does not answer must not hold
			// the exit; workers blocked on it return now.
			s.store.Abort()
		}
		_ = s.run.Wait()
	}
	if s.store != nil {
		var left *store.LeftError
		if err := s.store.Close(); errors.As(err, &left) {
			s.left = left
		}
		s.store = nil
	}
	if s.events != nil {
		s.events.Close()
		s.events = nil
	}
}

// save writes the session's event log to path.
func (s *session) save(path string) error {
	f, err := files.Create(path)
	if err != nil {
		return err
	}
	defer f.Discard() // unless closed complete
	w, err := check.NewWriter(f, s.header)
	if err != nil {
		return err
	}
	evs, _ := s.log.Read(0, nil)
	if err := w.Write(evs); err != nil {
		return err
	}
	var sum *check.Summary
	if s.finished() {
		sum = s.summary
	}
	if err := w.Close(sum); err != nil {
		return err
	}
	return f.Close()
}

// storeName says where the run's data lives, for the header.
func (s *session) storeName() string {
	if s.replay != "" {
		return "replay " + s.replay
	}
	return s.header.Store
}

// saveSchedule writes the finished simulated run's schedule to path.
func (s *session) saveSchedule(path string) error {
	f, err := files.Create(path)
	if err != nil {
		return err
	}
	defer f.Discard() // unless closed complete
	cfg := scenario.Config{Scenario: s.spec.Scenario, Strategy: s.spec.Strategy, Params: s.spec.Params, Seed: s.spec.Seed,
		Faults: s.run.Faults(), Steps: s.run.Hand()}
	if err := schedule.Of(cfg).Write(f); err != nil {
		return err
	}
	return f.Close()
}
