// Package levels holds the scheduler mode's levels: small simulated runs,
// one per lesson of the catalogue, each with a goal that is a violation
// ("sell one item twice", "make two workers hold the lock"). The person
// at the keyboard is the scheduler: they choose which worker moves until
// the checker finds the goal's violation in the log.
//
// A level file is JSON Lines: a level line, then a schedule (see package
// schedule) that fixes the run — scenario, strategy, parameters, seed and
// faults:
//
//	{"format":"locklab-level","version":1,"name":"first-sale","title":"…","goal":"oversold","goal_text":"sell one item twice","lesson":"…"}
//	{"format":"locklab-schedule","version":1,"scenario":"oversell","strategy":"none",…}
package levels

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/locklab/locklab/schedule"
	"github.com/locklab/locklab/untrusted"
)

// Format and Version name a level file's format.
const (
	Format  = "locklab-level"
	Version = 1
)

//go:embed *.level
var files embed.FS

// Level is one puzzle: a run to schedule by hand and the violation that
// wins it.
type Level struct {
	Name     string             `json:"name"`
	Title    string             `json:"title"`
	Goal     string             `json:"goal"`      // the checker's violation code that wins: overlap, oversold, lost_update
	GoalText string             `json:"goal_text"` // the goal in words
	Lesson   string             `json:"lesson"`    // what winning shows
	Run      *schedule.Schedule `json:"-"`
}

type head struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Level
}

// Goals are the violation codes a level may ask for.
var Goals = []string{"overlap", "oversold", "lost_update", "duplicate"}

// Read reads a level file; what is wrong is said in one line.
func Read(r io.Reader) (*Level, error) {
	data, err := io.ReadAll(io.LimitReader(r, schedule.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	var h head
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.Format != Format {
		return nil, fmt.Errorf("not a level: line 1 is not a %s line", Format)
	}
	if h.Version != Version {
		return nil, fmt.Errorf("level format version %d: this locklab reads version %d", h.Version, Version)
	}
	l := h.Level
	for _, s := range []string{l.Name, l.Title, l.GoalText, l.Lesson} {
		if !untrusted.IsClean(s) || len(s) > 400 {
			return nil, fmt.Errorf("level %q: a field is longer than 400 bytes or holds control characters", untrusted.Line(clip(l.Name)))
		}
	}
	if !contains(Goals, l.Goal) {
		return nil, fmt.Errorf("level %s: goal %q is none of %s", l.Name, untrusted.Line(clip(l.Goal)), strings.Join(Goals, ", "))
	}
	if l.Run, err = schedule.Read(bytes.NewReader(rest)); err != nil {
		return nil, fmt.Errorf("level %s: %v", l.Name, err)
	}
	if err := l.Run.Check(); err != nil {
		return nil, fmt.Errorf("level %s: %v", l.Name, err)
	}
	return &l, nil
}

// All are the levels shipped with locklab, easiest first.
func All() []*Level {
	names, _ := files.ReadDir(".")
	var out []string
	for _, e := range names {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	var ls []*Level
	for _, n := range out {
		data, _ := files.ReadFile(n)
		l, err := Read(bytes.NewReader(data))
		if err != nil {
			panic("levels: " + path.Base(n) + ": " + err.Error()) // shipped: a test reads them all
		}
		ls = append(ls, l)
	}
	return ls
}

// Lookup is the shipped level called name, or the one numbered so (from 1).
func Lookup(name string) (*Level, error) {
	all := All()
	var names []string
	for i, l := range all {
		if l.Name == name || fmt.Sprint(i+1) == name {
			return l, nil
		}
		names = append(names, l.Name)
	}
	return nil, fmt.Errorf("no level %q: want one of %s (or a level file)", untrusted.Line(clip(name)), strings.Join(names, ", "))
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}
