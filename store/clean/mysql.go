package clean

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	mystore "github.com/locklab/locklab/store/mysql"

	"github.com/go-sql-driver/mysql"
	"github.com/locklab/locklab/store"
)

// MySQLServer is a MySQL or MariaDB opened for locklab clean.
type MySQLServer struct {
	DB   *sql.DB
	Addr string
	url  string
}

// DialMySQL connects to the MySQL at a URL (the same as run takes).
func DialMySQL(ctx context.Context, raw string) (*MySQLServer, error) {
	cfg, err := mystore.Config(raw)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid MySQL URL %s: %s", store.Redact(raw), store.Scrub(err.Error(), raw)))
	}
	cfg.Timeout = 2 * time.Second
	s := &MySQLServer{Addr: cfg.Addr + "/" + cfg.DBName, url: raw}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid MySQL URL %s: %s", store.Redact(raw), store.Scrub(err.Error(), raw)))
	}
	s.DB = sql.OpenDB(conn)
	s.DB.SetMaxOpenConns(1)
	if err := s.DB.PingContext(ctx); err != nil {
		s.DB.Close()
		return nil, s.Fail(err)
	}
	return s, nil
}

// Fail is an error of this server for people, without its password.
func (s *MySQLServer) Fail(err error) error {
	return &store.ServerError{Kind: "MySQL", Addr: s.Addr, Err: errors.New(store.Scrub(firstLine(err.Error()), s.url))}
}

// Close closes the connection.
func (s *MySQLServer) Close() { s.DB.Close() }

// Survey lists the databases named locklab_…: the registered ones as
// Leftovers, the others by name (never touched).
func (s *MySQLServer) Survey(ctx context.Context) (runs []*Leftover, strays []string, err error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT schema_name FROM information_schema.schemata
WHERE schema_name LIKE 'locklab\_%' ORDER BY 1`)
	if err != nil {
		return nil, nil, s.Fail(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, nil, s.Fail(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, s.Fail(err)
	}
	for _, n := range names {
		r, err := s.describe(ctx, n)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			strays = append(strays, n)
			continue
		}
		runs = append(runs, r)
	}
	return runs, strays, nil
}

// describe reads a database's owner record, heartbeat and tables; nil
// when it is not a registered run's.
func (s *MySQLServer) describe(ctx context.Context, db string) (*Leftover, error) {
	var rec string
	var quiet sql.NullInt64
	err := s.DB.QueryRowContext(ctx, "SELECT owner, TIMESTAMPDIFF(MICROSECOND, beat, NOW(6)) FROM "+myIdent(db)+"."+
		myIdent(store.HeartbeatTable)+" LIMIT 1").Scan(&rec, &quiet)
	if err != nil {
		return nil, nil // no registry table, no row, not readable: not provably ours
	}
	o, ok := store.ParseOwner(rec)
	if !ok || db != "locklab_"+o.NS {
		return nil, nil
	}
	r := &Leftover{Name: db, Owner: o, Quiet: -1}
	if quiet.Valid {
		r.Quiet = (time.Duration(quiet.Int64) * time.Microsecond).Round(time.Second)
	}
	r.Alive, r.Why = o.Judge(quiet.Valid && time.Duration(quiet.Int64)*time.Microsecond < store.HeartbeatTTL)
	rows, err := s.DB.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY 1", db)
	if err != nil {
		return nil, s.Fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, s.Fail(err)
		}
		r.Parts = append(r.Parts, t)
	}
	return r, rows.Err()
}

// Drop removes a dead run's registry database, after reading its heartbeat
// again; a database holding anything locklab does not put there is left.
func (s *MySQLServer) Drop(ctx context.Context, r *Leftover) error {
	again, err := s.describe(ctx, r.Name)
	switch {
	case err != nil:
		return err
	case again == nil:
		return fmt.Errorf("its owner record is gone: left alone")
	case again.Alive:
		return fmt.Errorf("its heartbeat is back: left alone")
	case len(again.Parts) != 1 || again.Parts[0] != store.HeartbeatTable:
		return fmt.Errorf("it holds tables locklab does not make (%v): left alone", again.Parts)
	}
	if _, err := s.DB.ExecContext(ctx, "DROP DATABASE "+myIdent(r.Name)); err != nil {
		return s.Fail(err)
	}
	return nil
}

// myIdent quotes a MySQL identifier.
func myIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
