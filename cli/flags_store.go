package cli

import (
	"fmt"
	"os"
	"strings"

	_ "github.com/locklab/locklab/store/etcdembed" // etcd's lessons need nothing installed
	"github.com/locklab/locklab/store/spawn"

	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// storeFlags say where a run's keys live: real Redis URLs, the servers
// beyond Redis, and — on the commands that spawn servers — a topology.
type storeFlags struct {
	redis    []string
	topology string // --topology: servers to spawn for the run
	serverFlags
}

// addStoreFlags registers --redis and the other servers' flags, and
// --topology when the command spawns servers for its run.
func addStoreFlags(fl *pflag.FlagSet, f *storeFlags, topology bool) {
	fl.StringArrayVar(&f.redis, "redis", nil, "real Redis URL, redis://[:password@]host:port/db (repeat for Redlock nodes; default $LOCKLAB_REDIS_URL, else embedded)")
	if topology {
		fl.StringVar(&f.topology, "topology", "", "spawn real servers for the run (redis-server on PATH): "+spawn.TopologyNames()+"; stopped when it ends")
	}
	addServerFlags(fl, &f.serverFlags)
}

// paceFlags say how fast a run's time goes: a real server's stretched,
// the embedded clock's speed, or real time instead of the simulation.
type paceFlags struct {
	slowmo   float64
	speed    float64
	realtime bool
}

// addPaceFlags registers --slowmo and --speed, and --realtime when the
// command's runs can be simulated.
func addPaceFlags(fl *pflag.FlagSet, f *paceFlags, realtime bool) {
	fl.Float64Var(&f.slowmo, "slowmo", 1, "real Redis only: make every duration this many times longer")
	if realtime {
		fl.BoolVar(&f.realtime, "realtime", false, "embedded only: run in real time, goroutines scheduled by Go, instead of the deterministic simulation (the same seed, the same log)")
	}
	fl.Float64Var(&f.speed, "speed", 1, fmt.Sprintf("embedded only: virtual clock speed, %s to %s (the view opens each scenario at its own)", plain(store.MinSpeed), plain(store.MaxSpeed)))
}

// urls returns the Redis URLs (flags, else $LOCKLAB_REDIS_URL) after
// checking them, the pace's --slowmo and --speed, and --topology.
func (f *storeFlags) urls(cmd *cobra.Command, pace *paceFlags) ([]string, error) {
	urls := redisURLs(f.redis)
	if err := checkFloat("slowmo", pace.slowmo, minSlowmo, maxSlowmo); err != nil {
		return nil, err
	}
	for _, u := range urls {
		if _, err := store.URLAddr(u); err != nil {
			return nil, usageError{err} // never holds the password
		}
	}
	if err := checkFloat("speed", pace.speed, store.MinSpeed, store.MaxSpeed); err != nil {
		return nil, err
	}
	if err := checkStoreFlags(cmd, urls); err != nil {
		return nil, err
	}
	if err := f.checkTopology(cmd, urls); err != nil {
		return nil, err
	}
	return urls, nil
}

// checkTopology refuses --topology with a Redis URL, an unknown name or
// the embedded clock's --speed.
func (f *storeFlags) checkTopology(cmd *cobra.Command, urls []string) error {
	if !cmd.Flags().Changed("topology") {
		return nil
	}
	switch {
	case !spawn.ValidTopology(f.topology):
		return usagef("unknown topology %q: want one of %s", f.topology, spawn.TopologyNames())
	case cmd.Flags().Changed("redis"):
		return usagef("--topology spawns its own servers; --redis names yours: give one or the other")
	case len(urls) > 0:
		return usagef("--topology spawns its own servers; $LOCKLAB_REDIS_URL names yours: unset it or leave out --topology")
	case cmd.Flags().Changed("speed"):
		return usagef("--speed drives the embedded store's clock; spawned servers keep their own time: use --slowmo to stretch it")
	}
	return nil
}

// checkStoreFlags refuses the clock flag of the other store: --slowmo
// stretches a real server's durations, --speed drives the embedded clock.
func checkStoreFlags(cmd *cobra.Command, urls []string) error {
	set := cmd.Flags().Changed
	real := "--redis"
	if !set("redis") {
		real = "$LOCKLAB_REDIS_URL"
	}
	switch {
	case len(urls) > 0 && set("speed"):
		return usagef("--speed drives the embedded store's clock; a real Redis (%s) keeps its own time: use --slowmo to stretch it", real)
	case len(urls) == 0 && set("slowmo") && !set("topology"):
		return usagef("--slowmo stretches a real Redis's time (with --redis URL); the embedded store's clock takes --speed")
	}
	return nil
}

// redisURLs is --redis, else $LOCKLAB_REDIS_URL.
func redisURLs(flags []string) []string {
	if len(flags) > 0 {
		return flags
	}
	if env := os.Getenv("LOCKLAB_REDIS_URL"); env != "" {
		return []string{env}
	}
	return nil
}

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

// where is where a run on urls goes, as the store and pace flags say.
func (f *storeFlags) where(urls []string, pace *paceFlags) launch.Where {
	return launch.Where{URLs: urls, Servers: f.servers(), Topology: f.topology, Speed: pace.speed, Slowmo: pace.slowmo}
}
