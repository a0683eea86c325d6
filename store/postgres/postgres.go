// Package postgres is a run's connection to a PostgreSQL server: its own
// schema, registered for locklab clean, dropped when the run ends.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/locklab/locklab/store"
)

// Conn is a run's connection to a PostgreSQL server. Everything the run
// creates there lives in its own schema, dropped when the store closes.
type Conn struct {
	Pool   *pgxpool.Pool
	Schema string // locklab_<run-id>
	Addr   string // host:port/db, never a password

	beat *store.Beat // renews the schema's heartbeat (see store.Owner)
}

// maxPostgresConns bounds the pool (a server allows 100 connections by
// default); pool_max_conns in the URL overrides it.
const maxPostgresConns = 64

// Open connects to the Postgres server at raw for the run r and makes the
// run's schema there.
func Open(ctx context.Context, raw string, r store.Run) (*Conn, error) {
	o := r.Owner
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid Postgres URL %s: %s", store.RedactAs(raw, ""), store.ScrubAs(Message(err), raw)))
	}
	if !strings.Contains(raw, "pool_max_conns") {
		cfg.MaxConns = maxPostgresConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 { // connect_timeout in the URL overrides it
		cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "locklab"
	p := &Conn{Schema: "locklab_" + o.NS,
		Addr: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)}
	if strings.HasPrefix(cfg.ConnConfig.Host, "/") {
		p.Addr = fmt.Sprintf("%s/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Database)
	}
	fail := func(err error) error {
		se := &store.ServerError{Kind: "Postgres", Addr: p.Addr, Err: errors.New(store.ScrubAs(Message(err), raw))}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			se.Hint = "is the server running? Start one with `docker compose up -d postgres`"
		}
		return se
	}
	p.Pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fail(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := p.register(cctx, o); err != nil {
		p.Pool.Close()
		return nil, fail(err)
	}
	p.beat = store.StartBeat(func(ctx context.Context) error {
		_, err := p.Pool.Exec(ctx, "UPDATE "+p.Table(pgBeatTable)+" SET beat = now()")
		return err
	})
	return p, nil
}

// pgBeatTable is the table in a run's schema that holds its heartbeat.
const pgBeatTable = store.HeartbeatTable

// register makes the run's schema with its owner record as its comment
// and its heartbeat, all at once: a schema without them is not a run's.
func (p *Conn) register(ctx context.Context, o store.Owner) error {
	tx, err := p.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{"CREATE SCHEMA " + p.Ident(),
		"COMMENT ON SCHEMA " + p.Ident() + " IS " + pgQuote(o.String()),
		"CREATE TABLE " + p.Table(pgBeatTable) + " (beat timestamptz NOT NULL)",
		"INSERT INTO " + p.Table(pgBeatTable) + " VALUES (now())"} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// pgQuote quotes a string literal (COMMENT takes no parameter).
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Ident is the run's schema, quoted for SQL.
func (p *Conn) Ident() string { return pgx.Identifier{p.Schema}.Sanitize() }

// Table is a table of the run's schema, quoted for SQL.
func (p *Conn) Table(name string) string { return pgx.Identifier{p.Schema, name}.Sanitize() }

// Close drops the run's schema (and only it) and closes the pool.
func (p *Conn) Close(ctx context.Context) error {
	defer p.Pool.Close()
	p.beat.Stop()
	if _, err := p.Pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+p.Ident()+" CASCADE"); err != nil {
		return fmt.Errorf("store: cleanup on Postgres %s: %s", p.Addr, Message(err))
	}
	return nil
}

// PGMessage is the heart of a pgx error, on one line: the server's
// message, the network's, or the first line of the rest (pgx repeats the
// URL and every address it tried).
func Message(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Error()
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if strings.HasPrefix(msg, "cannot parse `") {
		if i := strings.Index(msg, "`: "); i >= 0 {
			msg = msg[i+3:]
		}
	}
	return strings.TrimSuffix(msg, ":")
}

// Address is where the server is: host:port (and database), never a
// password.
func (x *Conn) Address() string { return x.Addr }

// Register makes stores opened from now on reach postgres servers through
// Open; the strategies on postgres call it when they register.
func Register() {
	store.RegisterDriver(store.ServerPostgres, func(ctx context.Context, raw string, r store.Run) (store.Conn, error) {
		c, err := Open(ctx, raw, r)
		if err != nil {
			return nil, err // not a nil *Conn in an interface
		}
		return c, nil
	})
}
