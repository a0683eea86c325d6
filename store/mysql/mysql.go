// Package mysql is a run's connection to a MySQL or MariaDB server, and
// the reading of its URL.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/locklab/locklab/store"
)

// Conn is a run's connection to a MySQL or MariaDB server. The strategy
// on it (GET_LOCK) creates nothing that outlives a session: its locks are
// named under the run's prefix and end with their connections.
type Conn struct {
	DB   *sql.DB
	Addr string // host:port/db, never a password
	// Registry is the run's own database, locklab_<run-id>, holding its
	// owner record and heartbeat for locklab clean; "" when the user may
	// not create one (the run goes on: nothing else of it outlives its
	// sessions).
	Registry string

	beat *store.Beat
}

// Config reads mysql://user:password@host:port/db?param=value (or a
// driver DSN, user:password@tcp(host:port)/db?param=value). Only the
// driver's connection parameters in mysqlParams are taken: the driver
// sends any other as a SET statement to the server, so a URL could change
// the server's session however it liked.
func Config(raw string) (*gomysql.Config, error) {
	if !strings.Contains(raw, "://") {
		cfg, err := gomysql.ParseDSN(raw)
		if err != nil {
			return nil, err
		}
		return cfg, checkMySQLParams(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("the scheme must be mysql:// (got %s://)", u.Scheme)
	}
	if err := checkMySQLParams(raw); err != nil {
		return nil, err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	// The driver reads its parameters from a DSN: the address, database
	// and known parameters go through one; the credentials are set after.
	cfg, err := gomysql.ParseDSN("tcp(" + addr + ")/" + url.PathEscape(strings.TrimPrefix(u.Path, "/")) + "?" + u.RawQuery)
	if err != nil {
		return nil, err
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	return cfg, nil
}

// mysqlParams are the driver's parameters a URL may give: how to connect
// and authenticate, and the connection's character set. None of them
// reaches the server as a statement.
var mysqlParams = []string{"tls", "timeout", "readTimeout", "writeTimeout", "charset", "collation",
	"allowNativePasswords", "allowCleartextPasswords", "allowFallbackToPlaintext", "allowOldPasswords",
	"serverPubKey", "compress", "maxAllowedPacket", "connectionAttributes"}

// checkMySQLParams refuses a parameter after the '?' of raw that is not in
// mysqlParams. Its name is shown; its value may be a secret and is not.
func checkMySQLParams(raw string) error {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return nil
	}
	for _, kv := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if kv == "" || slices.Contains(mysqlParams, k) {
			continue
		}
		if len(k) > 40 {
			k = k[:40] + "…"
		}
		return fmt.Errorf("option %q is not one locklab passes on (the driver would send it to the server as a SET statement): leave it out; the options are %s",
			k, strings.Join(mysqlParams, ", "))
	}
	return nil
}

// Open connects to the MySQL or MariaDB server at raw for the run r, and
// registers the run there when the user may create its database.
func Open(ctx context.Context, raw string, r store.Run) (*Conn, error) {
	poolSize, o := r.PoolSize, r.Owner
	cfg, err := Config(raw)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid MySQL URL %s: %s", store.RedactAs(raw, ""), store.ScrubAs(err.Error(), raw)))
	}
	cfg.Timeout = 2 * time.Second
	m := &Conn{Addr: cfg.Addr + "/" + cfg.DBName}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid MySQL URL %s: %s", store.RedactAs(raw, ""), store.ScrubAs(err.Error(), raw)))
	}
	m.DB = sql.OpenDB(conn)
	m.DB.SetMaxOpenConns(min(max(poolSize, 10), 64))
	m.DB.SetMaxIdleConns(min(max(poolSize, 10), 64))
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := m.DB.PingContext(pctx); err != nil {
		m.DB.Close()
		se := &store.ServerError{Kind: "MySQL", Addr: m.Addr, Err: errors.New(store.ScrubAs(store.FirstLine(err.Error()), raw))}
		var me *gomysql.MySQLError
		if !errors.As(err, &me) {
			se.Hint = "is the server running? Start one with `docker compose up -d mariadb`"
		}
		return nil, se
	}
	m.register(pctx, o)
	return m, nil
}

const mysqlBeatTable = store.HeartbeatTable

// register makes the run's registry database: its one table holds the
// owner record and the heartbeat, renewed by the server's clock.
func (m *Conn) register(ctx context.Context, o store.Owner) {
	db := "locklab_" + o.NS
	if len(db) > 64 {
		return
	}
	q := "`" + db + "`.`" + mysqlBeatTable + "`"
	if _, err := m.DB.ExecContext(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
		return
	}
	// The table comes with its row in one statement: a run killed here
	// leaves an empty database (no record: left alone) or a registered one.
	if _, err := m.DB.ExecContext(ctx, "CREATE TABLE "+q+" (owner varchar(512) NOT NULL, beat timestamp(6) NOT NULL)"+
		" SELECT ? AS owner, NOW(6) AS beat", o.String()); err != nil {
		_, _ = m.DB.ExecContext(ctx, "DROP DATABASE `"+db+"`")
		return
	}
	m.Registry = db
	m.beat = store.StartBeat(func(ctx context.Context) error {
		_, err := m.DB.ExecContext(ctx, "UPDATE "+q+" SET beat = NOW(6)")
		return err
	})
}

// Close drops the run's registry and closes the pool.
func (m *Conn) Close(ctx context.Context) error {
	m.beat.Stop()
	var err error
	if m.Registry != "" {
		if _, err = m.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+m.Registry+"`"); err != nil {
			err = fmt.Errorf("store: cleanup on MySQL %s: %s", m.Addr, store.FirstLine(err.Error()))
		}
	}
	return errors.Join(err, m.DB.Close())
}

// Address is where the server is: host:port (and database), never a
// password.
func (x *Conn) Address() string { return x.Addr }

// Register makes stores opened from now on reach mysql servers through
// Open; the strategies on mysql call it when they register.
func Register() {
	store.RegisterDriver(store.ServerMySQL, func(ctx context.Context, raw string, r store.Run) (store.Conn, error) {
		c, err := Open(ctx, raw, r)
		if err != nil {
			return nil, err // not a nil *Conn in an interface
		}
		return c, nil
	})
}
