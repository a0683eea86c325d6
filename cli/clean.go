package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/clean"
	"github.com/locklab/locklab/store/spawn"
	"github.com/spf13/cobra"
)

type cleanFlags struct {
	redis                      []string
	postgres, mysql, memcached string
	dryRun                     bool
}

func newCleanCmd() *cobra.Command {
	f := &cleanFlags{}
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove what runs that are no longer alive left on real servers",
		Long: "Every run on a real server registers itself there: an owner record (who, where, since when)\n" +
			"and a heartbeat it renews. clean removes only what a registered owner left once that owner is\n" +
			"dead (its heartbeat lapsed " + store.HeartbeatTTL.String() + " ago, or its process on this host is gone), and\n" +
			"lists it first with the owner and its age. Keys or schemas merely named like locklab's are\n" +
			"never touched. Servers: Redis (keys locklab:<run>:…, workshop rooms and rounds included),\n" +
			"Postgres (schemas locklab_<run>), MySQL/MariaDB (a run's registry database locklab_<run>; its\n" +
			"locks live in its sessions and end with them), memcached (items listed by the LRU crawler's\n" +
			"metadump; a server without it lists nothing, and a run's items expire by themselves).\n" +
			"A killed run's Redis keys vanish by themselves too: each carries a TTL of at most " + store.NetTTL.String() + ";\n" +
			"its registration lasts " + store.OwnerTTL.String() + " after its last heartbeat, so clean can prove what it left.\n" +
			"With server flags, clean looks only at those; with none, at every server the environment names.\n" +
			"It also stops the servers a --topology run spawned if that locklab is gone (a directory\n" +
			"" + "$TMPDIR/locklab-topo-* holding its owner's pid; the servers working in it) and removes the directory.",
		Example: "  locklab clean --redis redis://localhost:6379 --dry-run\n" +
			"  locklab clean --postgres postgres://locklab@localhost:5432/locklab --memcached localhost:11211\n" +
			"  LOCKLAB_REDIS_URL=redis://:password@host:6379 locklab clean",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("clean takes no arguments: locklab clean --redis URL [--postgres URL] [--mysql URL] [--memcached ADDR] [--dry-run]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.redis, "redis", nil, "Redis URL to clean (repeat for several servers; default $LOCKLAB_REDIS_URL)")
	fl.StringVar(&f.postgres, "postgres", "", "PostgreSQL URL to clean, as run takes it (default $"+store.ServerEnv.Postgres+")")
	fl.StringVar(&f.mysql, "mysql", "", "MySQL/MariaDB URL to clean, as run takes it (default $"+store.ServerEnv.MySQL+")")
	fl.StringVar(&f.memcached, "memcached", "", "memcached address to clean, host:port (default $"+store.ServerEnv.Memcached+")")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be removed, remove nothing")
	return cmd
}

// targets are the servers to clean: the flags' or, with none, the
// environment's.
func (f *cleanFlags) targets() {
	if len(f.redis) > 0 || f.postgres != "" || f.mysql != "" || f.memcached != "" {
		return
	}
	if env := os.Getenv("LOCKLAB_REDIS_URL"); env != "" {
		f.redis = []string{env}
	}
	f.postgres = os.Getenv(store.ServerEnv.Postgres)
	f.mysql = os.Getenv(store.ServerEnv.MySQL)
	f.memcached = os.Getenv(store.ServerEnv.Memcached)
}

func (f *cleanFlags) run(ctx context.Context, out io.Writer) error {
	f.targets()
	if err := f.cleanSpawned(out); err != nil {
		return runtimeError{err}
	}
	if len(f.redis) == 0 && f.postgres == "" && f.mysql == "" && f.memcached == "" {
		fmt.Fprintln(out, "no server named (--redis URL, --postgres URL, --mysql URL, --memcached ADDR or their LOCKLAB_*_URL): looked only for spawned servers")
		return nil
	}
	for _, u := range f.redis {
		if _, err := store.URLAddr(u); err != nil {
			return usageError{err}
		}
	}
	var jobs []func() error
	for _, u := range f.redis {
		jobs = append(jobs, func() error { return f.cleanRedis(ctx, out, u) })
	}
	if f.postgres != "" {
		jobs = append(jobs, func() error { return f.cleanPostgres(ctx, out, f.postgres) })
	}
	if f.mysql != "" {
		jobs = append(jobs, func() error { return f.cleanMySQL(ctx, out, f.mysql) })
	}
	if f.memcached != "" {
		jobs = append(jobs, func() error { return f.cleanMemcached(out, f.memcached) })
	}
	var failed []error
	for _, job := range jobs {
		if err := job(); err != nil {
			var ue *store.URLError
			if errors.As(err, &ue) {
				return usageError{err}
			}
			if ctx.Err() != nil {
				return runtimeError{fmt.Errorf("interrupted: %v", err)}
			}
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return runtimeError{errors.Join(failed...)}
	}
	return nil
}

// cleanSpawned stops the servers of --topology runs whose locklab is gone
// and removes their directories; nothing of a live run.
func (f *cleanFlags) cleanSpawned(out io.Writer) error {
	left, err := spawn.FindLeftovers()
	if err != nil {
		return err
	}
	if len(left) == 0 {
		fmt.Fprintln(out, "spawned servers: none left by a locklab that is gone")
		return nil
	}
	for _, l := range left {
		fmt.Fprintf(out, "spawned servers left by locklab pid %d (gone): %s, %d process(es) %v\n", l.Owner, l.Dir, len(l.PIDs), l.PIDs)
		if f.dryRun {
			continue
		}
		if err := l.Remove(); err != nil {
			return fmt.Errorf("cannot remove %s: %w", l.Dir, err)
		}
		fmt.Fprintf(out, "  stopped %d, removed %s\n", len(l.PIDs), l.Dir)
	}
	if f.dryRun {
		fmt.Fprintln(out, "dry run: nothing stopped or removed")
	}
	return nil
}

func (f *cleanFlags) cleanRedis(ctx context.Context, out io.Writer, url string) error {
	srv, err := clean.Dial(ctx, url)
	if err != nil {
		return err
	}
	defer srv.Close()
	sv, err := srv.Survey(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the keys on %s: %s", srv.Addr, srv.Explain(err))
	}
	keys := showRuns(out, srv.Addr, sv)
	if f.done(out, keys, "key(s)") {
		return nil
	}
	deleted, err := srv.Delete(ctx, sv.Runs)
	if err != nil {
		return fmt.Errorf("deleted %d of %d key(s) on %s, then: %s", deleted, keys, srv.Addr, srv.Explain(err))
	}
	deletedLine(out, deleted, keys, sv)
	return nil
}

func (f *cleanFlags) cleanMemcached(out io.Writer, addr string) error {
	srv, err := clean.DialMemcached(addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	sv, err := srv.Survey()
	if err != nil {
		return err
	}
	keys := showRuns(out, "memcached "+srv.Addr, sv)
	if f.done(out, keys, "item(s)") {
		return nil
	}
	deleted, err := srv.Delete(sv.Runs)
	if err != nil {
		return fmt.Errorf("deleted %d of %d item(s) on memcached %s, then: %v", deleted, keys, srv.Addr, err)
	}
	deletedLine(out, deleted, keys, sv)
	return nil
}

// done prints the last line when there is nothing to do, or --dry-run.
func (f *cleanFlags) done(out io.Writer, n int, what string) bool {
	switch {
	case n == 0:
		fmt.Fprintln(out, "nothing to delete")
		return true
	case f.dryRun:
		fmt.Fprintf(out, "would delete %d %s; --dry-run: nothing deleted\n", n, what)
		return true
	}
	return false
}

func deletedLine(out io.Writer, deleted, keys int, sv *clean.Survey) {
	dead := 0
	for _, r := range sv.Runs {
		if !r.Alive {
			dead++
		}
	}
	fmt.Fprintf(out, "deleted %d key(s) of %d run(s)", deleted, dead)
	if deleted < keys {
		fmt.Fprintf(out, " (%d had expired or came back to life meanwhile)", keys-deleted)
	}
	fmt.Fprintln(out)
}

// showRuns lists what clean found on a server and returns how many keys
// it would delete.
func showRuns(out io.Writer, where string, sv *clean.Survey) int {
	now := time.Now()
	dead, keys := 0, 0
	for _, r := range sv.Runs {
		if !r.Alive {
			dead++
		}
	}
	fmt.Fprintf(out, "%s: %d registered locklab run(s), %d no longer alive\n", where, len(sv.Runs), dead)
	for _, r := range sv.Runs {
		list := r.Keys
		if r.Alive {
			fmt.Fprintf(out, "  run %s  alive (%s): %d key(s), left alone\n", r.ID, r.Why, len(r.Keys))
			list = r.Stale
		} else {
			fmt.Fprintf(out, "  run %s  not alive (%s): %d key(s)\n", r.ID, r.Why, len(r.Keys))
		}
		for _, o := range r.Owners {
			fmt.Fprintf(out, "    owner %s %s: %s (%s), started %s ago, last heartbeat %s ago\n", o.ID, lifeWord(o.Alive),
				o.Who(), o.Why, store.Age(o.Started, now), quietText(o.Quiet))
		}
		if r.Alive && len(list) > 0 {
			fmt.Fprintf(out, "    the dead owners' registrations go:\n")
		}
		for _, k := range list {
			fmt.Fprintf(out, "    %-44s %-7s %s\n", k.Name, k.Type, ttlText(k.TTL))
		}
		keys += len(list)
	}
	for _, s := range sv.Strays {
		fmt.Fprintf(out, "  locklab:%s:…  %d key(s) no owner registered: not provably locklab's, left alone\n", s.NS, s.Keys)
	}
	return keys
}

func lifeWord(alive bool) string {
	if alive {
		return "alive"
	}
	return "dead"
}

func quietText(d time.Duration) string {
	if d < 0 {
		return "unknown"
	}
	return d.Round(time.Second).String()
}

func ttlText(d time.Duration) string {
	if d < 0 {
		return "no TTL"
	}
	return "TTL " + d.Round(time.Second).String()
}
