// Package talk reads talk files: a list of scenes — a scenario, a strategy,
// its parameters and seed, optional extra captions and speaker notes per
// beat — that locklab plays as one presenter session. A talk file is
// untrusted input: it is bounded in size and scene count, and every error
// names its line.
package talk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"

	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/untrusted"
	"go.yaml.in/yaml/v3"
)

// Limits of a talk file.
const (
	MaxFileSize = 256 << 10 // bytes
	MaxScenes   = 64
	MaxBeats    = 100 // beat entries per scene
	MaxText     = 4000
)

// Talk is a talk file, read and checked.
type Talk struct {
	Title  string
	Path   string // where it was read from
	Scenes []Scene
}

// Scene is one run of the talk.
type Scene struct {
	Line     int // where the scene starts in the file
	Title    string
	Scenario string
	Strategy string
	Params   event.Params
	Seed     uint64
	Faults   []scenario.Timed // planned at instants of the scene's run (--faults' spec)
	Notes    string           // for the scene's title card
	Log      string           // a saved event log to play instead of running (resolved path)
	Beats    []Beat
}

// Beat is a talk's extra caption and notes for one beat of a scene.
type Beat struct {
	Line    int    // where the entry is in the file
	N       int    // 1-based, as the screen counts them; 0 when ID names it
	ID      string // the beat's ID (a scenario's beat or "verdict"), when it is named
	Caption string
	Notes   string
}

// Key is how the entry names its beat: its ID, or its number.
func (b Beat) Key() string {
	if b.ID != "" {
		return b.ID
	}
	return strconv.Itoa(b.N)
}

// Beat returns the talk's entry for beat n (from 1) or the beat with id,
// if it has one: by ID first.
func (s *Scene) Beat(n int, id string) (Beat, bool) {
	for _, b := range s.Beats {
		if b.ID != "" && b.ID == id {
			return b, true
		}
	}
	for _, b := range s.Beats {
		if b.ID == "" && b.N == n {
			return b, true
		}
	}
	return Beat{}, false
}

// Error is a talk file's error: the file, the line and what is wrong.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Load reads and checks the talk file at path.
func Load(path string) (*Talk, error) {
	f, err := files.Open(context.Background(), path) // a regular file: never waits on a FIFO
	var pe *files.PathError
	if errors.As(err, &pe) {
		return nil, &Error{File: path, Msg: "is " + pe.Kind + ", not a talk file"}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("is larger than %d KiB; a talk file is a short list of scenes", MaxFileSize>>10)}
	}
	t, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for i := range t.Scenes {
		s := &t.Scenes[i]
		if s.Log != "" && !filepath.IsAbs(s.Log) {
			s.Log = filepath.Join(dir, s.Log)
		}
		if s.Log != "" {
			if _, err := os.Stat(s.Log); err != nil {
				return nil, &Error{File: path, Line: s.Line, Msg: fmt.Sprintf("log %s: %v", s.Log, errors.Unwrap(err))}
			}
		}
	}
	return t, nil
}

// Parse reads a talk file's bytes; file names it in errors. Log paths are
// left as written.
func Parse(file string, b []byte) (*Talk, error) {
	if len(b) > MaxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("is larger than %d KiB", MaxFileSize>>10)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "is empty: a talk file lists its scenes under scenes:"}
		}
		return nil, yamlError(file, err)
	}
	p := &parser{file: file}
	t := &Talk{Path: file}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := p.talk(root, t); err != nil {
		return nil, err
	}
	return t, nil
}

// yamlError turns the YAML library's error into one line with the line
// number in front.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, msg = v, strings.TrimSpace(tail)
			}
		}
	}
	return &Error{File: file, Line: line, Msg: "not valid YAML: " + msg}
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, format string, a ...any) error {
	return &Error{File: p.file, Line: n.Line, Msg: fmt.Sprintf(format, a...)}
}

// mapping checks n is a mapping of known keys and calls each key's handler
// in the file's order.
func (p *parser) mapping(n *yaml.Node, what string, keys []string, each func(key string, k, v *yaml.Node) error) error {
	if n.Kind == yaml.AliasNode {
		return p.errf(n, "anchors and aliases are not supported in a talk file")
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s must be a mapping of %s", what, strings.Join(keys, ", "))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode || k.Kind == yaml.AliasNode {
			return p.errf(v, "anchors and aliases are not supported in a talk file")
		}
		if !slices.Contains(keys, k.Value) {
			return p.errf(k, "unknown key %q in %s: want one of %s", k.Value, what, strings.Join(keys, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, "%s given twice in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := each(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) text(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, "%s must be text", what)
	}
	if len(n.Value) > MaxText {
		return "", p.errf(n, "%s is longer than %d characters", what, MaxText)
	}
	return n.Value, nil
}

// prose is text the audience or the presenter reads (titles, captions,
// notes): the file is another's, so its control characters and escape
// sequences are removed; newlines stay.
func (p *parser) prose(n *yaml.Node, what string) (string, error) {
	s, err := p.text(n, what)
	return untrusted.Text(s), err
}

func (p *parser) talk(n *yaml.Node, t *Talk) error {
	var scenes *yaml.Node
	err := p.mapping(n, "the talk", []string{"title", "scenes"}, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "title":
			t.Title, err = p.prose(v, "title")
		case "scenes":
			scenes = v
		}
		return err
	})
	if err != nil {
		return err
	}
	if scenes == nil {
		return p.errf(n, "no scenes: list them under scenes:, each with a scenario and a strategy")
	}
	if scenes.Kind != yaml.SequenceNode {
		return p.errf(scenes, "scenes must be a list (each item starts with -)")
	}
	if len(scenes.Content) == 0 {
		return p.errf(scenes, "scenes is empty: a talk needs at least one scene")
	}
	if len(scenes.Content) > MaxScenes {
		return p.errf(scenes.Content[MaxScenes], "more than %d scenes; split the talk", MaxScenes)
	}
	for _, sn := range scenes.Content {
		s, err := p.scene(sn)
		if err != nil {
			return err
		}
		t.Scenes = append(t.Scenes, s)
	}
	return nil
}
