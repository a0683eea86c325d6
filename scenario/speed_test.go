package scenario_test

import (
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// Every scenario opens at a speed the virtual clock can run at.
func TestEveryScenarioDeclaresItsSpeed(t *testing.T) {
	for _, sc := range scenario.Catalogue() {
		if sc.Speed < store.MinSpeed || sc.Speed > store.MaxSpeed {
			t.Errorf("%s: opening speed %g, want one in [%g, %g]", sc.Name, sc.Speed, store.MinSpeed, store.MaxSpeed)
		}
	}
}
