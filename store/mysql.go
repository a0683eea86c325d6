package store

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

	"github.com/go-sql-driver/mysql"
)

// MySQL is a run's connection to a MySQL or MariaDB server. The strategy
// on it (GET_LOCK) creates nothing that outlives a session: its locks are
// named under the run's prefix and end with their connections.
type MySQL struct {
	DB   *sql.DB
	Addr string // host:port/db, never a password
	// Registry is the run's own database, locklab_<run-id>, holding its
	// owner record and heartbeat for locklab clean; "" when the user may
	// not create one (the run goes on: nothing else of it outlives its
	// sessions).
	Registry string

	beat *beater
}

// MySQLConfig reads mysql://user:password@host:port/db?param=value (or a
// driver DSN, user:password@tcp(host:port)/db?param=value). Only the
// driver's connection parameters in mysqlParams are taken: the driver
// sends any other as a SET statement to the server, so a URL could change
// the server's session however it liked.
func MySQLConfig(raw string) (*mysql.Config, error) {
	if !strings.Contains(raw, "://") {
		cfg, err := mysql.ParseDSN(raw)
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
	cfg, err := mysql.ParseDSN("tcp(" + addr + ")/" + url.PathEscape(strings.TrimPrefix(u.Path, "/")) + "?" + u.RawQuery)
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

func openMySQL(ctx context.Context, raw string, poolSize int, o Owner) (*MySQL, error) {
	cfg, err := MySQLConfig(raw)
	if err != nil {
		return nil, &URLError{msg: fmt.Sprintf("invalid MySQL URL %s: %s", redactAs(raw, ""), scrubAs(err.Error(), raw))}
	}
	cfg.Timeout = 2 * time.Second
	m := &MySQL{Addr: cfg.Addr + "/" + cfg.DBName}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, &URLError{msg: fmt.Sprintf("invalid MySQL URL %s: %s", redactAs(raw, ""), scrubAs(err.Error(), raw))}
	}
	m.DB = sql.OpenDB(conn)
	m.DB.SetMaxOpenConns(min(max(poolSize, 10), 64))
	m.DB.SetMaxIdleConns(min(max(poolSize, 10), 64))
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := m.DB.PingContext(pctx); err != nil {
		m.DB.Close()
		se := &ServerError{Kind: "MySQL", Addr: m.Addr, Err: errors.New(scrubAs(firstLine(err.Error()), raw))}
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			se.Hint = "is the server running? Start one with `docker compose up -d mariadb`"
		}
		return nil, se
	}
	m.register(pctx, o)
	return m, nil
}

// mysqlBeatTable is the table in a run's registry database.
// HeartbeatTable is the table a run's heartbeat is kept in, in its own
// schema (Postgres) or database (MySQL).
const HeartbeatTable = "locklab_heartbeat"

const mysqlBeatTable = HeartbeatTable

// register makes the run's registry database: its one table holds the
// owner record and the heartbeat, renewed by the server's clock.
func (m *MySQL) register(ctx context.Context, o Owner) {
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
	m.beat = startBeat(func(ctx context.Context) error {
		_, err := m.DB.ExecContext(ctx, "UPDATE "+q+" SET beat = NOW(6)")
		return err
	})
}

// close drops the run's registry and closes the pool.
func (m *MySQL) close(ctx context.Context) error {
	m.beat.stop()
	var err error
	if m.Registry != "" {
		if _, err = m.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+m.Registry+"`"); err != nil {
			err = fmt.Errorf("store: cleanup on MySQL %s: %s", m.Addr, firstLine(err.Error()))
		}
	}
	return errors.Join(err, m.DB.Close())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
