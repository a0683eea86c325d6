package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
)

type cleanFlags struct {
	redis  []string
	dryRun bool
}

func newCleanCmd() *cobra.Command {
	f := &cleanFlags{}
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Delete the keys that runs which are no longer alive left on a real Redis",
		Long: "clean finds every key named locklab:<run-id>:… on the server, groups them by run, and\n" +
			"deletes the keys of runs that are no longer alive (no heartbeat, or their process on this\n" +
			"host is gone), after listing them. It never touches a live run's keys, nor any other key.\n" +
			"Keys left by a killed run also vanish by themselves: each carries a TTL of " + store.NetTTL.String() + ".",
		Example: "  locklab clean --redis redis://localhost:6379 --dry-run\n" +
			"  LOCKLAB_REDIS_URL=redis://:password@host:6379 locklab clean",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("clean takes no arguments: locklab clean --redis URL [--dry-run]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	cmd.Flags().StringArrayVar(&f.redis, "redis", nil, "Redis URL to clean (repeat for several servers; default $LOCKLAB_REDIS_URL)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return cmd
}

func (f *cleanFlags) run(ctx context.Context, out io.Writer) error {
	urls := f.redis
	if len(urls) == 0 {
		if env := os.Getenv("LOCKLAB_REDIS_URL"); env != "" {
			urls = []string{env}
		}
	}
	if len(urls) == 0 {
		return usagef("clean needs a real server: --redis URL or LOCKLAB_REDIS_URL (the embedded store keeps nothing after a run)")
	}
	for _, u := range urls {
		if _, err := store.ParseURL(u); err != nil {
			return usageError{err}
		}
	}
	var failed []error
	for _, u := range urls {
		if err := f.cleanOne(ctx, out, u); err != nil {
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

func (f *cleanFlags) cleanOne(ctx context.Context, out io.Writer, url string) error {
	srv, err := store.Dial(ctx, url)
	if err != nil {
		return err
	}
	defer srv.Close()
	runs, err := srv.Survey(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the keys on %s: %s", srv.Addr, srv.Explain(err))
	}
	dead, keys := 0, 0
	for _, r := range runs {
		if !r.Alive {
			dead++
			keys += len(r.Keys)
		}
	}
	fmt.Fprintf(out, "%s: %d locklab run(s), %d no longer alive\n", srv.Addr, len(runs), dead)
	for _, r := range runs {
		if r.Alive {
			fmt.Fprintf(out, "  run %s  alive (%s): %d key(s), left alone\n", r.ID, r.Why, len(r.Keys))
			continue
		}
		fmt.Fprintf(out, "  run %s  not alive (%s): %d key(s)\n", r.ID, r.Why, len(r.Keys))
		for _, k := range r.Keys {
			fmt.Fprintf(out, "    %-44s %-7s %s\n", k.Name, k.Type, ttlText(k.TTL))
		}
	}
	switch {
	case keys == 0:
		fmt.Fprintln(out, "nothing to delete")
		return nil
	case f.dryRun:
		fmt.Fprintf(out, "would delete %d key(s) of %d run(s); --dry-run: nothing deleted\n", keys, dead)
		return nil
	}
	deleted, err := srv.Delete(ctx, runs)
	if err != nil {
		return fmt.Errorf("deleted %d of %d key(s) on %s, then: %s", deleted, keys, srv.Addr, srv.Explain(err))
	}
	fmt.Fprintf(out, "deleted %d key(s) of %d run(s)", deleted, dead)
	if deleted < keys {
		fmt.Fprintf(out, " (%d had expired meanwhile)", keys-deleted)
	}
	fmt.Fprintln(out)
	return nil
}

func ttlText(d time.Duration) string {
	if d < 0 {
		return "no TTL"
	}
	return "TTL " + d.Round(time.Second).String()
}
