package scenario_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// anyWorker masks worker names: which worker wins a tie is a race.
var anyWorker = regexp.MustCompile(`w\d\d+`)

// story is a run's beats: IDs, and IDs with captions.
func story(r *scenario.Run) (ids, full []string) {
	for _, e := range r.Log.Events() {
		// A real-time run on a busy machine may say the machine held it
		// up: the machine's words, not the story's.
		if e.Kind == event.KindBeat && e.Code != check.BeatMachine {
			ids = append(ids, e.Code)
			full = append(full, e.Code+" "+anyWorker.ReplaceAllString(e.Msg, "w··"))
		}
	}
	return ids, full
}

// TestSeededRunTellsTheSameStory runs each scenario's default many times on
// one seed: the same beats come in the same order every time, and where the
// scenario's numbers are not a race, with the same captions (but for which
// worker won a tie).
func TestSeededRunTellsTheSameStory(t *testing.T) {
	t.Parallel()
	// redlock: a vote counts only if it comes in time; trade-offs: its
	// captions say how long each store kept the lock, as measured.
	racy := map[string]bool{"oversell": true, "retry": true, "webhook": true, "redlock": true, "trade-offs": true}
	const times = 6
	// A story kept in real time (trade-offs) lasts its real seconds; its
	// beats are checked seed by seed where its outcomes are
	// (TestStoriesInRealTime), and told here six times over in the deep pass.
	var cat []*scenario.Scenario
	for _, sc := range scenario.Catalogue() {
		if sc.RealTime == "" || deep() {
			cat = append(cat, sc)
		}
	}
	cfg := func(i int) scenario.Config {
		sc := cat[i/times]
		return scenario.Config{Scenario: sc.Name, Strategy: sc.Strategies[0], Seed: 7, Params: sc.Defaults}
	}
	// Each scenario's runs side by side as in its outcome test, at the
	// same speed; a few scenarios at a time (their runs mostly sleep). A
	// scenario kept in real time (its servers keep their own time) runs at
	// its own pace: its leases and sessions are real seconds, and a busy
	// machine's late answers must stay inside them.
	runs := make([]*scenario.Run, len(cat)*times)
	errs := make([]error, len(cat))
	forEach(len(cat), 3, func(k int) {
		speed := storySpeed(cat[k].Name)
		if cat[k].RealTime != "" {
			speed = min(speed, cat[k].Speed)
		}
		rs, err := runMany(nil, speed, times, limitFor(cat[k].Name), func(i int) scenario.Config { return cfg(k*times + i) })
		errs[k] = err
		copy(runs[k*times:], rs)
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for k, sc := range cat {
		t.Run(sc.Name, func(t *testing.T) {
			var first, firstFull []string
			for i, r := range runs[k*times : (k+1)*times] {
				ids, full := story(r)
				if len(ids) < 2 || ids[len(ids)-1] != scenario.BeatVerdict {
					t.Fatalf("run %d: beats %v: want a story ending with the verdict", i, ids)
				}
				if i == 0 {
					first, firstFull = ids, full
					continue
				}
				if !slices.Equal(ids, first) {
					t.Fatalf("run %d told another story:\n%v\nfirst:\n%v\nits steps:\n%s\nthe first's:\n%s", i, ids, first, steps(r), steps(runs[k*times]))
				}
				// Captions, but the verdict's counts, are the same too.
				if !racy[sc.Name] && !slices.Equal(full[:len(full)-1], firstFull[:len(firstFull)-1]) {
					t.Fatalf("run %d said it differently:\n%s\nfirst:\n%s", i, strings.Join(full, "\n"), strings.Join(firstFull, "\n"))
				}
			}
		})
	}
}

// steps lists what r's workers did, one event a line, for a story that
// went another way.
func steps(r *scenario.Run) string {
	var b strings.Builder
	for _, e := range r.Log.Events() {
		switch e.Kind {
		case event.KindAttempt, event.KindBackoff:
			continue
		}
		fmt.Fprintf(&b, "%12v %-4s %-14s %-8s %s %s\n", e.T, wname(e.Worker), e.Kind, e.Res, e.Code, e.Msg)
	}
	return b.String()
}

func wname(w int32) string {
	if w < 0 {
		return "sys"
	}
	return fmt.Sprintf("w%02d", w)
}

// storySpeed is the speed a scenario's outcome tests run it at.
func storySpeed(name string) float64 {
	switch name {
	case "redlock":
		return redlockSpeed
	case "renewal":
		return slowSpeed
	case "naive-flaws":
		return naiveSpeed
	}
	return outcomeSpeed
}

// TestBeatsFollowTheirEvents checks that a beat comes right after the event
// it tells of: the narration never runs ahead of the run.
func TestBeatsFollowTheirEvents(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("ttl-expiry")
	r := runAt(t, nil, 4, scenario.Config{Scenario: "ttl-expiry", Strategy: "fenced", Seed: 1, Params: sc.Defaults})
	evs := r.Log.Events()
	want := map[string]event.Kind{"acquired": event.KindAcquired, "taken": event.KindAcquired, "rejected": event.KindFenceRejected}
	seen := 0
	for i, e := range evs {
		k, ok := want[e.Code]
		if e.Kind != event.KindBeat || !ok {
			continue
		}
		seen++
		if i == 0 || evs[i-1].Kind != k {
			t.Errorf("beat %q follows a %v event, not its %v", e.Code, evs[max(i-1, 0)].Kind, k)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of %d beats said", seen, len(want))
	}
}

// TestBeatIDsListEveryBeatARunTells: every beat a run tells is among its
// scenario's beat IDs, in their order, so a presenter's "beat i of N"
// knows N from the first beat — Redlock's part headings included.
func TestBeatIDsListEveryBeatARunTells(t *testing.T) {
	t.Parallel()
	for _, sc := range scenario.Catalogue() {
		if sc.Name == "trade-offs" {
			continue // told in real time among TestStoriesInRealTime
		}
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			if sc.RealTime != "" {
				skipRealTimeUnderRace(t)
			}
			beatsListed(t, sc, sc.Defaults)
		})
	}
}

// beatsListed runs sc's first strategy with p and checks that every beat
// it told is among sc's beat IDs, in their order.
func beatsListed(t *testing.T, sc *scenario.Scenario, p event.Params) {
	strategy := sc.Strategies[0]
	ids := sc.BeatIDs(strategy, p)
	r := runAt(t, nil, storySpeed(sc.Name), scenario.Config{Scenario: sc.Name, Strategy: strategy, Seed: 1, Params: p})
	told, _ := story(r)
	i := 0
	for _, id := range told {
		if id == "" || id == check.BeatMachine {
			continue // a note under the current beat, or the machine's: not a beat of the story
		}
		for i < len(ids) && ids[i] != id {
			i++
		}
		if i == len(ids) {
			t.Fatalf("the run told %v; its beat IDs are %v", told, ids)
		}
		i++
	}
}
