package talk

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
	"go.yaml.in/yaml/v3"
)

var sceneKeys = []string{"scenario", "strategy", "title", "seed", "params", "faults", "notes", "log", "beats"}

// sceneNodes are the keys of a scene read later than its own fields:
// they need the scenario and its parameters first.
type sceneNodes struct{ params, beats, strat, faults *yaml.Node }

// scene reads one scene: its fields, then what its scenario makes of them.
func (p *parser) scene(n *yaml.Node) (Scene, error) {
	s := Scene{Line: n.Line, Seed: 1}
	var later sceneNodes
	if err := p.sceneFields(n, &s, &later); err != nil {
		return s, err
	}
	if s.Scenario == "" {
		return s, p.errf(n, "a scene needs a scenario: one of %s", scenario.Names())
	}
	sc, _ := scenario.Lookup(s.Scenario)
	if s.Strategy == "" {
		s.Strategy = sc.Strategies[0]
	} else if !sc.Supports(s.Strategy) {
		return s, p.errf(later.strat, "%q is not a strategy of %s: want one of %s", s.Strategy, sc.Name, sc.StrategyNames())
	}
	if s.Title == "" {
		s.Title = sc.Title
	}
	if err := p.sceneParams(n, later.params, sc, &s); err != nil {
		return s, err
	}
	var err error
	if later.faults != nil {
		if later.faults.Kind != yaml.ScalarNode || len(later.faults.Value) > 4096 {
			return s, p.errf(later.faults, "faults must be one line as --faults takes it: %s", schedule.SpecHelp)
		}
		if s.Faults, err = schedule.ParseFaults(later.faults.Value, s.Params); err != nil {
			return s, p.errf(later.faults, "faults: %v", err)
		}
	}
	if later.beats != nil {
		if s.Beats, err = p.beats(later.beats, sc.BeatIDs(s.Strategy, s.Params)); err != nil {
			return s, err
		}
	}
	return s, nil
}

// sceneFields reads a scene's own fields into s, and keeps in later the
// nodes that need its scenario.
func (p *parser) sceneFields(n *yaml.Node, s *Scene, later *sceneNodes) error {
	return p.mapping(n, "a scene", sceneKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "scenario":
			s.Scenario, err = p.text(v, "scenario")
			if err == nil {
				_, err = scenario.Lookup(s.Scenario)
				if err != nil {
					err = p.errf(v, "%v", err)
				}
			}
		case "strategy":
			later.strat = v
			s.Strategy, err = p.text(v, "strategy")
		case "title":
			s.Title, err = p.prose(v, "title")
		case "notes":
			s.Notes, err = p.prose(v, "notes")
		case "log":
			s.Log, err = p.text(v, "log")
		case "seed":
			var u uint64
			if u, err = strconv.ParseUint(v.Value, 10, 64); err != nil || v.Kind != yaml.ScalarNode {
				err = p.errf(v, "seed must be a whole number from 0 (got %q)", v.Value)
			}
			s.Seed = u
		case "params":
			later.params = v
		case "faults":
			later.faults = v
		case "beats":
			later.beats = v
		}
		return err
	})
}

// sceneParams are the scenario's defaults (with the nodes a multi-node
// strategy needs), changed by the scene's params, and checked.
func (p *parser) sceneParams(n, params *yaml.Node, sc *scenario.Scenario, s *Scene) error {
	s.Params = sc.Defaults
	if info, _ := lock.Lookup(s.Strategy); info.MultiNode() && s.Params.Nodes < info.Nodes.Min {
		s.Params.Nodes = info.Nodes.Default
	}
	if params != nil {
		if err := p.params(params, sc, &s.Params); err != nil {
			return err
		}
	}
	if err := s.Params.Validate(); err != nil {
		at := n
		if params != nil {
			at = params
		}
		return p.errf(at, "%v", err)
	}
	return nil
}

// ParamNames are the parameters a scene of sc may set: the flags it reads.
func ParamNames(sc *scenario.Scenario) []string { return sc.Uses }

func (p *parser) params(n *yaml.Node, sc *scenario.Scenario, ps *event.Params) error {
	names := ParamNames(sc)
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "params must be a mapping of %s's parameters: %s", sc.Name, strings.Join(names, ", "))
	}
	return p.mapping(n, sc.Name+"'s params", names, func(key string, _, v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode {
			return p.errf(v, "%s must be a single value", key)
		}
		if err := setParam(ps, key, v.Value); err != nil {
			return p.errf(v, "%s: %v", key, err)
		}
		return nil
	})
}

// setParam sets the parameter named like its flag from its text, as the
// flag would: the one table of parameters reads it, and the ranges are
// checked as a run's are.
func setParam(ps *event.Params, key, val string) error {
	pa, ok := event.ParamByName(key)
	if !ok {
		return fmt.Errorf("is not a parameter locklab knows")
	}
	if err := pa.Set(ps, val); err != nil {
		return err
	}
	var pe *event.ParamError
	if err := ps.Validate(); errors.As(err, &pe) && pe.Param == key {
		return errors.New(pe.Msg)
	}
	return nil
}

func (p *parser) beats(n *yaml.Node, ids []string) ([]Beat, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "beats must be a list of entries like - beat: 1, with caption: and notes:")
	}
	if len(n.Content) > MaxBeats {
		return nil, p.errf(n.Content[MaxBeats], "more than %d beat entries in one scene", MaxBeats)
	}
	var out []Beat
	seen := map[string]int{}
	for _, bn := range n.Content {
		var b Beat
		var at *yaml.Node
		err := p.mapping(bn, "a beat", []string{"beat", "caption", "notes"}, func(key string, _, v *yaml.Node) error {
			var err error
			switch key {
			case "beat":
				at = v
				if v.Kind != yaml.ScalarNode {
					return p.errf(v, "beat must be a number from 1 or one of the beats' names: %s", strings.Join(ids, ", "))
				}
				var nerr error
				if b.N, nerr = strconv.Atoi(v.Value); nerr != nil {
					b.N, b.ID = 0, v.Value
					if !slices.Contains(ids, b.ID) {
						err = p.errf(v, "unknown beat %q: want a number from 1 or one of %s", v.Value, strings.Join(ids, ", "))
					}
				} else if b.N < 1 || b.N > MaxBeats {
					err = p.errf(v, "beat must be a number from 1 to %d, as the screen counts beats (got %q)", MaxBeats, v.Value)
				}
			case "caption":
				b.Caption, err = p.prose(v, "caption")
			case "notes":
				b.Notes, err = p.prose(v, "notes")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if at == nil {
			return nil, p.errf(bn, "a beat entry needs beat: N (which beat, from 1)")
		}
		if line, dup := seen[b.Key()]; dup {
			return nil, p.errf(at, "beat %s is already given on line %d", b.Key(), line)
		}
		seen[b.Key()] = at.Line
		b.Line = at.Line
		out = append(out, b)
	}
	return out, nil
}
