package storetest

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// MariaDB is a MariaDB (or MySQL) server the test started.
type MariaDB struct {
	URL string
}

// StartMariaDB initialises a data dir in a temp dir and starts mariadbd on
// a free loopback port (as the mysql user when the test runs as root),
// with grant tables skipped; it is stopped and removed when tb ends.
// Without mariadbd the test is skipped, or failed under
// LOCKLAB_REQUIRE_SERVERS=1.
func StartMariaDB(tb testing.TB) *MariaDB {
	tb.Helper()
	server := findBin("mariadbd", "/usr/sbin")
	if server == "" {
		server = findBin("mysqld", "/usr/sbin")
	}
	install := findBin("mariadb-install-db")
	if install == "" {
		install = findBin("mysql_install_db")
	}
	if server == "" || install == "" {
		missing(tb, "mariadbd and mariadb-install-db on PATH or in /usr/sbin", "apt-get install -y mariadb-server")
	}
	as := unprivileged("mysql")
	dir := serverDir(tb, "locklab-mariadb-", as)
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	userArgs := []string{}
	if as != nil {
		userArgs = []string{"--user=mysql"}
	}
	initArgs := append([]string{"--auth-root-authentication-method=normal", "--skip-test-db"}, userArgs...)
	args := append([]string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + dir}, initArgs...)
	if err := initialised(data, install, initArgs, func() error { return run(as, install, args...) }); err != nil {
		tb.Fatalf("mariadb-install-db: %v", err)
	}
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		args := append([]string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + dir, "--socket=" + filepath.Join(dir, "sock"),
			"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin",
			"--pid-file=" + filepath.Join(dir, "pid"), "--innodb-buffer-pool-size=16M", "--max-connections=400",
			"--skip-name-resolve"}, userArgs...)
		p, err := startProc(as, "", server, args...)
		if err != nil {
			tb.Fatal(err)
		}
		url := fmt.Sprintf("mysql://root@127.0.0.1:%d/", port)
		err = waitFor(p, 60*time.Second, func() error { return greets(fmt.Sprintf("127.0.0.1:%d", port)) })
		if err == nil {
			tb.Cleanup(p.stop)
			return &MariaDB{URL: url}
		}
		p.stop()
		last = err
	}
	tb.Fatalf("start mariadbd: %v", last)
	return nil
}

// greets reports whether a MySQL-protocol server at addr is ready: it
// listens once its engines are up, and greets a client first, with a
// handshake packet (protocol version 10) or an error packet (0xff).
func greets(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b [5]byte // a 3-byte length, a sequence number, the first byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return fmt.Errorf("no greeting: %w", err)
	}
	if b[4] != 10 {
		return fmt.Errorf("greeting %#x, not a handshake", b[4])
	}
	return nil
}
