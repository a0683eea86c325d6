package scenario

import (
	"github.com/locklab/locklab/event"
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

// WithTraits is h with its locks' traits from the registry, by its
// scenario and strategy, when its log was written before headers recorded
// them; a header that has them is returned as it is.
func WithTraits(h event.Header) event.Header {
	if h.Traits == nil && h.KeyTraits == nil {
		sc, _ := Lookup(h.Scenario)
		h.Traits, h.KeyTraits = lockTraits(sc, h.Strategy)
	}
	return h
}

// glyph is the mark a view draws for s, for the words that name it: one
// glyph for one thing, from the glyph table.
func glyph(s themes.Symbol) string { return string(s.Rune()) }
