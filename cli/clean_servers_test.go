package cli

import (
	"bytes"
	"context"
	"database/sql"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/clean"
	"github.com/locklab/locklab/store/storetest"
)

// TestKilledRunsOnPostgresMySQLMemcachedCleanRemovesExactlyThem: runs of
// pg-row, mysql-get-lock and memcached-add are killed with SIGKILL on real
// servers; clean --dry-run lists each one's schema, registry database and
// items with its owner and age, and removes nothing; clean removes exactly
// them. A live run's schema, and schemas, databases and items named like
// locklab's that no run registered (one with a forged owner record for
// another namespace), stay as they were.
func TestKilledRunsOnPostgresMySQLMemcachedCleanRemovesExactlyThem(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts locklab processes and servers")
	}
	pg, my, mc := storetest.StartPostgres(t), storetest.StartMariaDB(t), storetest.StartMemcached(t)
	rd := storetest.Start(t) // the runs' Redis, for their real time (--slowmo)
	ctx := context.Background()
	pc, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", strings.TrimSuffix(strings.TrimPrefix(my.URL, "mysql://root@"), "/")
	md, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	mcc := memcache.New(mc.Addr)

	forged := store.Owner{NS: "ffffffffffff", ID: "000000000000", Role: "run", PID: 1, Host: "elsewhere", Started: time.Now()}
	for _, q := range []string{
		"CREATE SCHEMA locklab_0123456789ab", "CREATE TABLE locklab_0123456789ab.userdata (v text)",
		"INSERT INTO locklab_0123456789ab.userdata VALUES ('precious')",
		"CREATE SCHEMA locklab_forged", "COMMENT ON SCHEMA locklab_forged IS '" + forged.String() + "'",
	} {
		if _, err := pc.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	for _, q := range []string{"CREATE DATABASE locklab_0123456789ab", "CREATE TABLE locklab_0123456789ab.locklab_heartbeat (owner text, beat timestamp(6))",
		"INSERT INTO locklab_0123456789ab.locklab_heartbeat VALUES ('not a record', NOW(6))"} {
		if _, err := md.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	for _, k := range []string{"locklab:0123456789ab:userdata", "locklab:0123456789ab:owner:000000000000"} {
		if err := mcc.Set(&memcache.Item{Key: k, Value: []byte(forged.String())}); err != nil {
			t.Fatal(err)
		}
	}

	pgSchemas := func() map[string]bool {
		out := map[string]bool{}
		rows, _ := pc.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'locklab\\_%'")
		names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, n := range names {
			out[n] = true
		}
		return out
	}
	myDBs := func() map[string]bool { // the registered ones
		out := map[string]bool{}
		srv, err := clean.DialMySQL(ctx, my.URL)
		if err != nil {
			t.Fatalf("mysql: %v", err)
		}
		defer srv.Close()
		runs, _, err := srv.Survey(ctx)
		if err != nil {
			t.Fatalf("mysql survey: %v", err)
		}
		for _, r := range runs {
			out[r.Name] = true
		}
		return out
	}
	myAll := func() map[string]bool {
		out := map[string]bool{}
		rows, err := md.Query("SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'locklab\\_%'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			rows.Scan(&n)
			out[n] = true
		}
		return out
	}
	mcRuns := func() map[string]bool {
		out := map[string]bool{}
		srv, err := clean.DialMemcached(mc.Addr)
		if err != nil {
			return out
		}
		defer srv.Close()
		sv, err := srv.Survey()
		if err != nil {
			t.Fatalf("memcached survey: %v", err)
		}
		for _, r := range sv.Runs {
			out["locklab_"+r.ID] = true
		}
		return out
	}

	// start runs locklab and returns the namespace that appeared for it.
	start := func(list func() map[string]bool, args ...string) (string, *exec.Cmd) {
		before := list()
		var buf bytes.Buffer
		cmd := locklab(t, &buf, append([]string{"run", "oversell", "--stock", "100", "--workers", "3", "--retry", "fixed",
			"--max-retries", "1000", "--redis", rd.URL, "--slowmo", "1000", "-q"}, args...)...)
		var id string
		if !waitFor(30*time.Second, func() bool {
			for n := range list() {
				if !before[n] {
					id = n
					return true
				}
			}
			return false
		}) {
			t.Fatalf("%v: the run never registered; locklab said:\n%s", args, buf.String())
		}
		return id, cmd
	}
	kill := func(list func() map[string]bool, args ...string) string {
		id, cmd := start(list, args...)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if state, _ := cmd.Process.Wait(); state != nil && state.Exited() {
			t.Fatalf("%v: the run ended before the kill (exit %d)", args, state.ExitCode())
		}
		t.Logf("%v: %s killed", args, id)
		return id
	}
	deadPG := kill(pgSchemas, "--lock", "pg-row", "--postgres", pg.URL)
	deadMy := kill(myDBs, "--lock", "mysql-get-lock", "--mysql", my.URL)
	deadMc := strings.TrimPrefix(kill(mcRuns, "--lock", "memcached-add", "--memcached", mc.Addr), "locklab_")
	livePG, _ := start(pgSchemas, "--lock", "pg-row", "--postgres", pg.URL)

	args := []string{"clean", "--postgres", pg.URL, "--mysql", my.URL, "--memcached", mc.Addr}
	code, out, stderr := cli(t, append(args, "--dry-run")...)
	if code != 0 {
		t.Fatalf("clean --dry-run: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("clean --dry-run:\n%s", out)
	// A killed run is not alive: its process is gone, or, on a machine slow
	// enough (the race detector) that its heartbeat lapsed first, it has
	// none. Either way clean names it, and deletes it below.
	for _, dead := range []string{"schema " + deadPG, "database " + deadMy} {
		if !regexp.MustCompile(regexp.QuoteMeta(dead) + `  not alive \((its process is gone|no heartbeat)\): run, process`).MatchString(out) {
			t.Errorf("clean --dry-run does not say %s is not alive, and why", dead)
		}
	}
	for _, want := range []string{
		"run " + deadMc + "  not alive (", "schema " + livePG + "  alive (heartbeat)",
		"schema locklab_0123456789ab  no owner registered", "schema locklab_forged  no owner registered",
		"database locklab_0123456789ab  no owner registered", "locklab:0123456789ab:…  2 key(s) no owner registered"} {
		if !strings.Contains(out, want) {
			t.Errorf("clean --dry-run does not say %q", want)
		}
	}
	if !strings.Contains(out, "started ") || !strings.Contains(out, "last heartbeat ") {
		t.Errorf("clean --dry-run gives no ages:\n%s", out)
	}
	if !pgSchemas()[deadPG] || !myDBs()[deadMy] || !mcRuns()["locklab_"+deadMc] {
		t.Fatalf("clean --dry-run removed something: %v %v %v", pgSchemas(), myDBs(), mcRuns())
	}

	code, out, stderr = cli(t, args...)
	if code != 0 {
		t.Fatalf("clean: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("clean:\n%s", out)
	if pgSchemas()[deadPG] || myDBs()[deadMy] || mcRuns()["locklab_"+deadMc] {
		t.Errorf("clean left a dead run's schema, database or items:\n%s", out)
	}
	if !pgSchemas()[livePG] {
		t.Errorf("clean dropped the live run's schema %s", livePG)
	}
	var v string
	if err := pc.QueryRow(ctx, "SELECT v FROM locklab_0123456789ab.userdata").Scan(&v); err != nil || v != "precious" {
		t.Errorf("a foreign schema was touched: %q, %v", v, err)
	}
	if !pgSchemas()["locklab_forged"] || !myAll()["locklab_0123456789ab"] || myAll()[deadMy] {
		t.Errorf("a foreign schema or database was dropped")
	}
	for _, k := range []string{"locklab:0123456789ab:userdata", "locklab:0123456789ab:owner:000000000000"} {
		if it, err := mcc.Get(k); err != nil || string(it.Value) != forged.String() {
			t.Errorf("foreign memcached item %s: %v", k, err)
		}
	}
}
