package clean

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/store/postgres"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/locklab/locklab/store"
)

// Leftover is a run's namespace on a server beyond Redis (a Postgres
// schema, a MySQL table) as locklab clean found it.
type Leftover struct {
	Name  string // the schema or table
	Owner store.Owner
	Alive bool
	Why   string
	Quiet time.Duration // since its last heartbeat, by the server's clock; -1: unknown
	Parts []string      // what is in it: its tables
}

// PostgresServer is a Postgres opened for locklab clean.
type PostgresServer struct {
	Conn *pgx.Conn
	Addr string
	url  string
}

// DialPostgres connects to the Postgres at a URL (the same as run takes).
func DialPostgres(ctx context.Context, raw string) (*PostgresServer, error) {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid Postgres URL %s: %s", store.Redact(raw), store.Scrub(postgres.Message(err), raw)))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 2 * time.Second
	}
	cfg.RuntimeParams["application_name"] = "locklab clean"
	s := &PostgresServer{Addr: fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database), url: raw}
	if strings.HasPrefix(cfg.Host, "/") {
		s.Addr = fmt.Sprintf("%s/%s", cfg.Host, cfg.Database)
	}
	if s.Conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, s.Fail(err)
	}
	return s, nil
}

// Fail is an error of this server for people, without its password.
func (s *PostgresServer) Fail(err error) error {
	return &store.ServerError{Kind: "Postgres", Addr: s.Addr, Err: errors.New(store.Scrub(postgres.Message(err), s.url))}
}

// Close closes the connection.
func (s *PostgresServer) Close() { s.Conn.Close(context.Background()) }

// Survey lists the schemas named locklab_…: the registered ones as
// Leftovers, the others by name (never touched).
func (s *PostgresServer) Survey(ctx context.Context) (runs []*Leftover, strays []string, err error) {
	rows, err := s.Conn.Query(ctx, `SELECT n.nspname, coalesce(obj_description(n.oid, 'pg_namespace'), '')
FROM pg_namespace n WHERE n.nspname LIKE 'locklab\_%' ORDER BY 1`)
	if err != nil {
		return nil, nil, s.Fail(err)
	}
	type schema struct{ name, comment string }
	var all []schema
	for rows.Next() {
		var sc schema
		if err := rows.Scan(&sc.name, &sc.comment); err != nil {
			return nil, nil, s.Fail(err)
		}
		all = append(all, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.Fail(err)
	}
	for _, sc := range all {
		o, ok := store.ParseOwner(sc.comment)
		if !ok || sc.name != "locklab_"+o.NS {
			strays = append(strays, sc.name)
			continue
		}
		r := &Leftover{Name: sc.name, Owner: o, Quiet: -1}
		if err := s.describe(ctx, r); err != nil {
			return nil, nil, err
		}
		runs = append(runs, r)
	}
	return runs, strays, nil
}

// describe reads a registered schema's heartbeat and what is in it.
func (s *PostgresServer) describe(ctx context.Context, r *Leftover) error {
	var secs *float64
	beat := pgx.Identifier{r.Name, store.HeartbeatTable}.Sanitize()
	err := s.Conn.QueryRow(ctx, "SELECT extract(epoch FROM now() - max(beat))::float8 FROM "+beat).Scan(&secs)
	if err != nil && !isUndefinedTable(err) {
		return s.Fail(err)
	}
	if secs != nil {
		r.Quiet = time.Duration(*secs * float64(time.Second)).Round(time.Second)
	}
	r.Alive, r.Why = r.Owner.Judge(r.Quiet >= 0 && r.Quiet < store.HeartbeatTTL)
	rows, err := s.Conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') ORDER BY 1`, r.Name)
	if err != nil {
		return s.Fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return s.Fail(err)
		}
		r.Parts = append(r.Parts, name)
	}
	return rows.Err()
}

// Drop removes a dead run's schema: its heartbeat is read again under a
// lock that a live run's beat would wait on, then its tables and the
// schema go with RESTRICT, so that nothing of anyone else's that depends
// on them (a view of theirs) is ever dropped: such a schema is left, and
// Drop says why.
func (s *PostgresServer) Drop(ctx context.Context, r *Leftover) error {
	tx, err := s.Conn.Begin(ctx)
	if err != nil {
		return s.Fail(err)
	}
	defer tx.Rollback(ctx)
	beat := pgx.Identifier{r.Name, store.HeartbeatTable}.Sanitize()
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
		return s.Fail(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+beat+" IN EXCLUSIVE MODE"); err != nil {
		if isUndefinedTable(err) {
			return fmt.Errorf("its heartbeat table is gone: not as locklab made it, left alone")
		}
		return s.Fail(err)
	}
	var fresh bool
	err = tx.QueryRow(ctx, "SELECT coalesce(bool_or(now() - beat < $1::interval), false) FROM "+beat,
		fmt.Sprintf("%d milliseconds", store.HeartbeatTTL.Milliseconds())).Scan(&fresh)
	switch {
	case err != nil:
		return s.Fail(err)
	case fresh:
		if alive, _ := r.Owner.Judge(true); alive {
			return fmt.Errorf("its heartbeat is back: left alone")
		}
	}
	if err := dropRelations(ctx, tx, r.Name); err != nil {
		return s.Fail(err)
	}
	if _, err := tx.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{r.Name}.Sanitize()+" RESTRICT"); err != nil {
		return s.Fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return s.Fail(err)
	}
	return nil
}

// dropRelations drops a schema's views, then its tables and sequences,
// each kind at once (a table may reference another), all RESTRICT.
func dropRelations(ctx context.Context, tx pgx.Tx, schema string) error {
	kinds := []struct{ drop, relkinds string }{{"VIEW", "'v'"}, {"MATERIALIZED VIEW", "'m'"},
		{"FOREIGN TABLE", "'f'"}, {"TABLE", "'r','p'"}, {"SEQUENCE", "'S'"}}
	for _, k := range kinds {
		rows, err := tx.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind::text IN (`+k.relkinds+`)`, schema)
		if err != nil {
			return err
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(names) == 0 {
			continue
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = pgx.Identifier{schema, n}.Sanitize()
		}
		if _, err := tx.Exec(ctx, "DROP "+k.drop+" IF EXISTS "+strings.Join(quoted, ", ")+" RESTRICT"); err != nil {
			return err
		}
	}
	return nil
}

// isUndefinedTable: SQLSTATE 42P01.
func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
