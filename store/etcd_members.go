package store

import (
	"errors"
	"sync"
)

// EtcdCluster is etcd members run in this process for a run that asks for
// etcd without a server of its own (package etcdembed starts them).
type EtcdCluster interface {
	URL() string         // the members' client URLs, comma-separated: what --etcd takes
	Endpoints() []string // each member's client URL
	Members() int        // how many members it was started with
	Leader() int         // the member that leads, -1 when none does
	Stop(i int) error    // stops member i as its operator would: a leader hands its leadership on
	Close() error        // stops every member and removes their data
}

// startEmbedded starts n members; nil when this program has no embedded
// etcd (it did not import package etcdembed).
var startEmbedded func(n int) (EtcdCluster, error)

// RegisterEmbeddedEtcd makes start the way this program starts etcd
// members of its own; package etcdembed calls it when imported.
func RegisterEmbeddedEtcd(start func(n int) (EtcdCluster, error)) { startEmbedded = start }

// ErrNoEmbeddedEtcd: this program was built without etcd's server.
var ErrNoEmbeddedEtcd = errors.New("this program has no embedded etcd: point --etcd at a server (e.g. --etcd http://127.0.0.1:2379)")

// StartEtcd starts n etcd members in this process, forming one cluster,
// and waits until they serve. Close stops them and removes their data.
func StartEtcd(n int) (EtcdCluster, error) {
	if startEmbedded == nil {
		return nil, ErrNoEmbeddedEtcd
	}
	return startEmbedded(n)
}

// sharedEtcd is the one-member cluster the stores open at once share.
var sharedEtcd struct {
	mu    sync.Mutex
	c     EtcdCluster
	users int
}

// useSharedEtcd returns the shared member, started if no store uses it.
func useSharedEtcd(int) (EtcdCluster, error) {
	sharedEtcd.mu.Lock()
	defer sharedEtcd.mu.Unlock()
	if sharedEtcd.c == nil {
		c, err := StartEtcd(1)
		if err != nil {
			return nil, err
		}
		sharedEtcd.c = c
	}
	sharedEtcd.users++
	return sharedEtcd.c, nil
}

// leaveSharedEtcd stops the shared member when its last store leaves.
func leaveSharedEtcd(c EtcdCluster) error {
	sharedEtcd.mu.Lock()
	defer sharedEtcd.mu.Unlock()
	if sharedEtcd.c != c {
		return nil
	}
	if sharedEtcd.users--; sharedEtcd.users > 0 {
		return nil
	}
	sharedEtcd.c = nil
	return c.Close()
}
