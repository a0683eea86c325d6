package scenario

import (
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/themes"
)

// lockTraits are what the locks of a run of scenario sc with strategy are,
// from the registry: the run's lock (nil when it takes none), and the keys
// whose lock is another.
func lockTraits(sc *Scenario, strategy string) (*trait.Traits, map[string]trait.Traits) {
	name := strategy
	if sc != nil && sc.lockOf != nil {
		name = sc.lockOf(strategy)
	}
	var run *trait.Traits
	if info, ok := lock.Lookup(name); ok {
		t := info.Traits
		run = &t
	}
	var keys map[string]trait.Traits
	if sc != nil {
		for key, s := range sc.keyLocks {
			if info, ok := lock.Lookup(s); ok {
				if keys == nil {
					keys = map[string]trait.Traits{}
				}
				keys[key] = info.Traits
			}
		}
	}
	return run, keys
}

// TraitsOf is what lock key's lock is in h's run, and false when the run
// takes no lock there. A log written before headers recorded traits gets
// them from the registry, by its scenario and strategy.
func (h *Header) TraitsOf(key string) (trait.Traits, bool) {
	run, keys := h.Traits, h.KeyTraits
	if run == nil && keys == nil {
		sc, _ := Lookup(h.Scenario)
		run, keys = lockTraits(sc, h.Strategy)
	}
	if t, ok := keys[key]; ok {
		return t, true
	}
	if run == nil {
		return trait.Traits{}, false
	}
	return *run, true
}

// LockTraits are the traits of every lock of h's run: the run's (nil when
// none), and those of keys whose lock is another. Old logs get them from
// the registry, as TraitsOf does.
func (h *Header) LockTraits() (*trait.Traits, map[string]trait.Traits) {
	if h.Traits != nil || h.KeyTraits != nil {
		return h.Traits, h.KeyTraits
	}
	sc, _ := Lookup(h.Scenario)
	return lockTraits(sc, h.Strategy)
}

// CodeUndo is the Code of the release events that undo a Redlock acquire
// short of its quorum, one per node asked: the votes it had are freed,
// but no held lock was released.
const CodeUndo = lock.OpUndo

// IsUndo reports whether e undoes a partial acquire's votes.
func IsUndo(e *Event) bool {
	return (e.Kind == KindRelease || e.Kind == KindReleaseFailed) && e.Code == CodeUndo
}

// glyph is the mark a view draws for s, for the words that name it: one
// glyph for one thing, from the glyph table.
func glyph(s themes.Symbol) string { return string(s.Rune()) }
