// Package schedule reads and writes a simulated run's schedule: the
// scenario, the strategy, the parameters, the seed and the faults with
// their instants of simulated time. Replaying a schedule reproduces the
// run's event log byte for byte after its header.
//
// A schedule file is JSON Lines, one object a line: first the header,
// then one line per fault in the order of their instants:
//
//	{"format":"locklab-schedule","version":1,"scenario":"oversell","strategy":"naive","seed":42,"params":{…}}
//	{"at":"12ms","fault":"pause","worker":"w02","for":"600ms"}
//	{"at":"40ms","fault":"node-pause","node":1}
//	{"at":"41.2ms","fault":"crash","worker":"w01","landed":{"timers":9,"steps":130}}
//	{"step":7,"worker":"w03"}
//
// A fault pressed during the run (in the view) says where it landed:
// after how many timers fired and steps were scheduled; a replay lands
// it there again. A step chosen by hand (the view's scheduler mode) says
// who went at that step of the scheduler; files with such steps are
// version 2.
package schedule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/untrusted"
)

// Format and Version name the file's format; a reader refuses any other.
const (
	Format  = "locklab-schedule"
	Version = 2
)

// plainVersion is the version of a schedule without hand-chosen steps,
// which a locklab that knows no steps reads too.
const plainVersion = 1

// Limits of a schedule file: one is a few hundred bytes; a bigger one is
// not a schedule.
const (
	MaxBytes  = 1 << 20
	MaxLine   = 8 << 10
	MaxFaults = 10000
	MaxSteps  = 10000
)

// Schedule is what makes a simulated run: replayed, the same log.
type Schedule struct {
	Scenario string
	Strategy string
	Params   event.Params
	Seed     uint64
	Faults   []scenario.Timed
	Steps    []scenario.Step // chosen by hand, in the order of their steps
}

// Config is the run the schedule describes, to start with scenario.Start.
func (s *Schedule) Config() scenario.Config {
	return scenario.Config{Scenario: s.Scenario, Strategy: s.Strategy, Params: s.Params, Seed: s.Seed,
		Faults: slices.Clone(s.Faults), Steps: slices.Clone(s.Steps)}
}

// Of is the schedule of the run cfg describes.
func Of(cfg scenario.Config) *Schedule {
	return &Schedule{Scenario: cfg.Scenario, Strategy: cfg.Strategy, Params: cfg.Params, Seed: cfg.Seed,
		Faults: slices.Clone(cfg.Faults), Steps: slices.Clone(cfg.Steps)}
}

type header struct {
	Format   string       `json:"format"`
	Version  int          `json:"version"`
	Scenario string       `json:"scenario"`
	Strategy string       `json:"strategy"`
	Seed     uint64       `json:"seed"`
	Params   event.Params `json:"params"`
}

type faultLine struct {
	At     string  `json:"at"`
	Fault  string  `json:"fault"`
	Worker string  `json:"worker,omitempty"`
	Node   *int    `json:"node,omitempty"`
	For    string  `json:"for,omitempty"`
	Landed *landed `json:"landed,omitempty"`
}

// stepLine is a step chosen by hand.
type stepLine struct {
	Step   uint64 `json:"step"`
	Worker string `json:"worker"`
}

// landed is where a fault pressed during the run landed: after so many
// timers fired and steps were scheduled.
type landed struct {
	Timers uint64 `json:"timers"`
	Steps  uint64 `json:"steps"`
}

// Write writes s as JSON Lines: Go durations ("12.5ms") keep every
// nanosecond of an instant.
func (s *Schedule) Write(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	v := plainVersion
	if len(s.Steps) > 0 {
		v = Version
	}
	if err := enc.Encode(header{Format, v, s.Scenario, s.Strategy, s.Seed, s.Params}); err != nil {
		return err
	}
	for _, f := range s.Faults {
		l := faultLine{At: f.At.String(), Fault: KindName(f.Kind)}
		switch {
		case f.Kind == scenario.FaultNet:
			l.Fault = netName(f.Fault)
			if f.Worker >= 0 {
				l.Worker = check.WorkerName(f.Worker)
			}
			if f.Node >= 0 {
				l.Node = &f.Node
			}
		case workerFault(f.Kind):
			l.Worker = check.WorkerName(f.Worker)
		default:
			l.Node = &f.Node
		}
		if f.D > 0 {
			l.For = f.D.String()
		}
		if f.Pressed != nil {
			l.Landed = &landed{f.Pressed.Timers, f.Pressed.Steps}
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	for _, st := range s.Steps {
		if err := enc.Encode(stepLine{st.N, st.Actor}); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Error is a schedule that cannot be read: one line saying why.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, a ...any) error { return &Error{fmt.Sprintf(format, a...)} }

// Read reads a schedule, refusing a file bigger than MaxBytes, a line
// longer than MaxLine, another format or version, and anything that does
// not parse; its words reach the error cleaned of control sequences.
func Read(r io.Reader) (*Schedule, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, errorf("not a schedule: bigger than %d KiB (a schedule is a few lines)", MaxBytes>>10)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	var s *Schedule
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if s == nil {
			if s, err = readHeader(line); err != nil {
				return nil, err
			}
			continue
		}
		if isStep(line) {
			if len(s.Steps) >= MaxSteps {
				return nil, errorf("line %d: more than %d steps: not a schedule locklab wrote", n, MaxSteps)
			}
			st, err := readStep(line)
			if err != nil {
				return nil, errorf("line %d: %s", n, err.Error())
			}
			s.Steps = append(s.Steps, st)
			continue
		}
		if len(s.Steps) > 0 {
			return nil, errorf("line %d: a fault after the steps: faults come first", n)
		}
		if len(s.Faults) >= MaxFaults {
			return nil, errorf("line %d: more than %d faults: not a schedule locklab wrote", n, MaxFaults)
		}
		f, err := readFault(line, s.Params)
		if err != nil {
			return nil, errorf("line %d: %s", n, err.Error())
		}
		s.Faults = append(s.Faults, f)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, errorf("line %d: longer than %d bytes: not a schedule locklab wrote", n+1, MaxLine)
	}
	if sc.Err() != nil {
		return nil, sc.Err()
	}
	if s == nil {
		return nil, errorf("empty: a schedule starts with a %q header line", Format)
	}
	return s, nil
}

func readHeader(line []byte) (*Schedule, error) {
	var h header
	if err := strictJSON(line, &h); err != nil || h.Format == "" {
		return nil, errorf("line 1: not a %s header (want {\"format\":%q,\"version\":%d,…})", Format, Format, Version)
	}
	if h.Format != Format {
		return nil, errorf("format %q is not a schedule: want %q", untrusted.Line(clip(h.Format)), Format)
	}
	if h.Version != Version && h.Version != plainVersion {
		return nil, errorf("schedule format version %d: this locklab reads versions %d and %d", h.Version, plainVersion, Version)
	}
	if !untrusted.IsClean(h.Scenario) || !untrusted.IsClean(h.Strategy) {
		return nil, errorf("line 1: the scenario or strategy holds control characters")
	}
	return &Schedule{Scenario: h.Scenario, Strategy: h.Strategy, Params: h.Params, Seed: h.Seed}, nil
}

func readFault(line []byte, p event.Params) (scenario.Timed, error) {
	var l faultLine
	if err := strictJSON(line, &l); err != nil {
		return scenario.Timed{}, errors.New("not a fault line (want {\"at\":\"12ms\",\"fault\":\"pause\",\"worker\":\"w02\"})")
	}
	spec := l.Fault + ":"
	switch {
	case l.Worker != "" && l.Node != nil:
		spec += fmt.Sprintf("%s-n%d", l.Worker, *l.Node)
	case l.Worker != "":
		spec += l.Worker
	case l.Node != nil:
		spec += fmt.Sprintf("n%d", *l.Node)
	}
	spec += "@" + l.At
	if l.For != "" {
		spec += "+" + l.For
	}
	f, err := parseOne(spec, p)
	if err == nil && l.Landed != nil {
		f.Pressed = &sim.Point{Timers: l.Landed.Timers, Steps: l.Landed.Steps}
	}
	return f, err
}

// isStep reports whether line is a step's (it has a "step" field).
func isStep(line []byte) bool {
	var probe struct {
		Step *json.RawMessage `json:"step"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.Step != nil
}

// maxActor bounds an actor's path in a step line.
const maxActor = 80

func readStep(line []byte) (scenario.Step, error) {
	var l stepLine
	if err := strictJSON(line, &l); err != nil || l.Step == 0 || l.Worker == "" {
		return scenario.Step{}, errors.New("not a step line (want {\"step\":7,\"worker\":\"w03\"}, steps counted from 1)")
	}
	if len(l.Worker) > maxActor || !untrusted.IsClean(l.Worker) {
		return scenario.Step{}, fmt.Errorf("step %d: the worker's name is longer than %d bytes or holds control characters", l.Step, maxActor)
	}
	return scenario.Step{N: l.Step, Actor: l.Worker}, nil
}

// strictJSON decodes one object, refusing unknown fields and trailing data.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// clip keeps an untrusted word short enough for one line.
func clip(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}

// Check refuses a schedule whose instants go backwards or reach past a
// day: a file written by hand, or by something else.
func (s *Schedule) Check() error {
	var last time.Duration
	for i, f := range s.Faults {
		if f.At < last {
			return errorf("fault %d at %v comes before the one above it (%v): faults are listed in time order", i+1, f.At, last)
		}
		last = f.At
	}
	var n uint64
	wait := false
	for _, st := range s.Steps {
		if st.N < n || st.N == n && !wait {
			return errorf("step %d comes after step %d: steps are listed in order, each once (after the waits at it)", st.N, n)
		}
		n, wait = st.N, st.Actor == scenario.WaitStep
	}
	return nil
}
