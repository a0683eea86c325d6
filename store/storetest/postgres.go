package storetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Postgres is a PostgreSQL server the test started.
type Postgres struct {
	URL string
}

// StartPostgres initialises a database cluster in a temp dir and starts
// postgres on a free loopback port (its unix socket in the same dir), as
// the postgres user when the test runs as root; it is stopped and removed
// when tb ends. Without postgres the test is skipped, or failed under
// LOCKLAB_REQUIRE_SERVERS=1.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	dirs := []string{"/usr/lib/postgresql/*/bin"}
	initdb, server, isready := findBin("initdb", dirs...), findBin("postgres", dirs...), findBin("pg_isready", dirs...)
	if initdb == "" || server == "" || isready == "" {
		missing(tb, "postgres and initdb on PATH or in /usr/lib/postgresql/*/bin", "apt-get install -y postgresql")
	}
	as := unprivileged("postgres")
	dir := serverDir(tb, "locklab-pg-", as)
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	initArgs := []string{"-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-instructions"}
	if err := initialised(data, initdb, initArgs, func() error { return run(as, initdb, append([]string{"-D", data}, initArgs...)...) }); err != nil {
		tb.Fatalf("initdb: %v", err)
	}
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		p, err := startProc(as, "", server, "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=400")
		if err != nil {
			tb.Fatal(err)
		}
		url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=20", port)
		// pg_isready: accepting connections (no driver linked into every
		// test that starts a server).
		err = waitFor(p, 30*time.Second, func() error {
			out, err := exec.Command(isready, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres", "-t", "1").CombinedOutput()
			if err != nil {
				return fmt.Errorf("pg_isready: %v %s", err, out)
			}
			return nil
		})
		if err == nil {
			tb.Cleanup(p.stop)
			return &Postgres{URL: url}
		}
		p.stop()
		last = err
	}
	tb.Fatalf("start postgres: %v", last)
	return nil
}
