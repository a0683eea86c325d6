package scenario

import (
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/store"
)

// TradeBeatIDs are the beats a trade-offs run on a store with the servers
// have tells, in order.
func TradeBeatIDs(strategy string, p event.Params, have store.Servers) []string {
	var ids []string
	for _, b := range tradeBeats(strategy, p, &have) {
		ids = append(ids, b.ID)
	}
	return append(ids, BeatVerdict)
}
