package linear

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Fifty workers read 5 and write 4 at once, as oversell's do without a
// lock: porcupine's search over the identical writes takes exponential
// time, a witness one sort. A history no placement explains is left to
// porcupine, which finds it illegal.
func TestWitnessOfConcurrentIdenticalWrites(t *testing.T) {
	t.Parallel()
	ops := []porcupine.Operation{{ClientId: 0, Input: regIn{"write", 5}, Call: 0, Output: int64(5), Return: 1}}
	for w := range 50 {
		c := int64(w + 1)
		ops = append(ops,
			porcupine.Operation{ClientId: w + 1, Input: regIn{"read", 0}, Call: 10 + c, Output: int64(5), Return: 200 + c},
			porcupine.Operation{ClientId: w + 1, Input: regIn{"write", 4}, Call: 150 + c, Output: int64(4), Return: 400 + c})
	}
	ops = append(ops, porcupine.Operation{ClientId: 0, Input: regIn{"read", 0}, Call: 1000, Output: int64(4), Return: 1000})
	start := time.Now()
	at, ok := witness(registerModel, ops)
	if !ok {
		t.Fatal("no witness for a linearizable history")
	}
	t.Logf("witness: each operation at its %s, in %v", at, time.Since(start))

	bad := append([]porcupine.Operation(nil), ops...)
	bad[len(bad)-1].Output = int64(7) // a value nobody wrote
	if _, ok := witness(registerModel, bad); ok {
		t.Fatal("a witness for a read of a value nobody wrote")
	}
	if res := porcupine.CheckOperations(registerModel, bad[len(bad)-3:]); res {
		t.Fatal("porcupine accepted a read of a value nobody wrote")
	}
}
