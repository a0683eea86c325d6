package cli

import "github.com/locklab/locklab/lock"

// quorumOf is how many nodes a strategy's lock runs on, from its traits:
// at least min (a quorum whose majority survives one node's loss), def
// unless told; min 0 or 1 for a single-node lock or none.
func quorumOf(strategy string) (min, def int) {
	info, _ := lock.Lookup(strategy)
	return info.Nodes.Min, info.Nodes.Default
}

// multiNode reports whether the strategy's lock is a quorum of nodes.
func multiNode(strategy string) bool {
	info, _ := lock.Lookup(strategy)
	return info.MultiNode()
}
