package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWithoutEmbeddedEtcd: a program that does not embed etcd's server
// says etcd needs a server of the user's, everywhere it would start one.
// Not parallel: it sets what the program embeds.
func TestWithoutEmbeddedEtcd(t *testing.T) {
	saved := startEmbedded
	startEmbedded = nil
	defer func() { startEmbedded = saved }()
	if (Servers{}).Has(ServerEtcd) || !(Servers{Etcd: "http://127.0.0.1:2379"}).Has(ServerEtcd) {
		t.Error("etcd is offered without a server or refused with one")
	}
	if _, err := StartEtcd(1); !errors.Is(err, ErrNoEmbeddedEtcd) {
		t.Errorf("StartEtcd: %v", err)
	}
	st, err := Open(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Server(ServerEtcd)
	var nc *NotConfiguredError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), "--etcd URL or LOCKLAB_ETCD_URL") {
		t.Errorf("the store's etcd: %v", err)
	}
}
