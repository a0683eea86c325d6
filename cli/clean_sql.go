package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/clean"
)

// sqlServer is a Postgres or MySQL as clean sees it: a run's namespace
// there is a schema or a database.
type sqlServer interface {
	Survey(ctx context.Context) ([]*clean.Leftover, []string, error)
	Drop(ctx context.Context, r *clean.Leftover) error
	Close()
}

func (f *cleanFlags) cleanPostgres(ctx context.Context, out io.Writer, url string) error {
	srv, err := clean.DialPostgres(ctx, url)
	if err != nil {
		return err
	}
	return f.cleanSQL(ctx, out, srv, "Postgres "+srv.Addr, "schema")
}

func (f *cleanFlags) cleanMySQL(ctx context.Context, out io.Writer, url string) error {
	srv, err := clean.DialMySQL(ctx, url)
	if err != nil {
		return err
	}
	return f.cleanSQL(ctx, out, srv, "MySQL "+srv.Addr, "database")
}

// cleanSQL lists a server's registered namespaces and drops the dead ones'.
func (f *cleanFlags) cleanSQL(ctx context.Context, out io.Writer, srv sqlServer, where, what string) error {
	defer srv.Close()
	runs, strays, err := srv.Survey(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	var dead []*clean.Leftover
	for _, r := range runs {
		if !r.Alive {
			dead = append(dead, r)
		}
	}
	fmt.Fprintf(out, "%s: %d registered locklab run(s), %d no longer alive\n", where, len(runs), len(dead))
	for _, r := range runs {
		state := "alive"
		if !r.Alive {
			state = "not alive"
		}
		fmt.Fprintf(out, "  %s %s  %s (%s): %s, started %s ago, last heartbeat %s ago; holds %s\n", what, r.Name, state, r.Why,
			r.Owner.Who(), store.Age(r.Owner.Started, now), quietText(r.Quiet), strings.Join(r.Parts, ", "))
	}
	for _, s := range strays {
		fmt.Fprintf(out, "  %s %s  no owner registered: not provably locklab's, left alone\n", what, s)
	}
	if f.done(out, len(dead), what+"(s)") {
		return nil
	}
	dropped := 0
	var failed []string
	for _, r := range dead {
		if err := srv.Drop(ctx, r); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.Name, err))
			continue
		}
		dropped++
	}
	fmt.Fprintf(out, "dropped %d %s(s) of %d run(s)\n", dropped, what, len(dead))
	if len(failed) > 0 {
		return fmt.Errorf("on %s, left %s", where, strings.Join(failed, "; "))
	}
	return nil
}
