package cli

import (
	"strings"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serverFlags name the servers beyond Redis.
type serverFlags struct {
	postgres, mysql, memcached, etcd string
	etcdMembers                      int
}

func addServerFlags(fl *pflag.FlagSet, f *serverFlags) {
	fl.StringVar(&f.postgres, "postgres", "", "PostgreSQL URL for the pg-* strategies, postgres://user:password@host:port/db (default $"+store.ServerEnv.Postgres+")")
	fl.StringVar(&f.mysql, "mysql", "", "MySQL/MariaDB URL for mysql-get-lock, mysql://user:password@host:port/db (default $"+store.ServerEnv.MySQL+")")
	fl.StringVar(&f.memcached, "memcached", "", "memcached address for memcached-add, host:port (default $"+store.ServerEnv.Memcached+")")
	fl.StringVar(&f.etcd, "etcd", "", "etcd URL(s) for the etcd strategy, http://host:port[,http://host:port…] (default $"+store.ServerEnv.Etcd+"; else etcd embedded for the run)")
	fl.IntVar(&f.etcdMembers, "etcd-members", 1, "members of the embedded etcd: 1, 3 or 5 (a majority keeps serving when one stops)")
}

// servers are the servers the flags (else the environment) name.
func (f *serverFlags) servers() store.Servers {
	return store.Servers{Postgres: f.postgres, MySQL: f.mysql, Memcached: f.memcached, Etcd: f.etcd, EtcdMembers: f.etcdMembers}.FromEnv()
}

// usable keeps the strategies whose servers are configured. A strategy
// asked for by name without its server is a usage error; --all leaves such
// strategies out and says so in one note per server.
func (f *serverFlags) usable(cmd *cobra.Command, strategies []string, all bool) ([]string, error) {
	have := f.servers()
	switch {
	case f.etcdMembers != 1 && f.etcdMembers != 3 && f.etcdMembers != 5:
		return nil, usagef("--etcd-members must be 1, 3 or 5 (got %d)", f.etcdMembers)
	case f.etcdMembers != 1 && have.Etcd != "":
		return nil, usagef("--etcd-members sizes the embedded etcd; --etcd (or %s) names a cluster of yours", store.ServerEnv.Etcd)
	}
	var keep []string
	left := map[string][]string{} // by server
	var kinds []string
	for _, s := range strategies {
		need := scenario.NeedsServer(s, have)
		switch {
		case need == "":
			keep = append(keep, s)
		case !all:
			return nil, usagef("--lock %s", need)
		default:
			k := scenario.ServerOf(s)
			if left[k] == nil {
				kinds = append(kinds, k)
			}
			left[k] = append(left[k], s)
		}
	}
	for _, k := range kinds {
		note(cmd, "left out %s: they need %s", strings.Join(left[k], ", "), store.Needs(k))
	}
	return keep, nil
}
