package cli

import (
	"strings"
	"testing"
)

// TestServerURLsAreRefusedInTheirOwnWords: a URL is refused before any
// connection, in one line that names the scheme the user gave (never
// redis:// for another server), shows no password, and passes the server
// nothing it did not ask for: no negative Redis database, no MySQL option
// the driver would send to the server as a SET statement.
func TestServerURLsAreRefusedInTheirOwnWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args      []string
		want      string
		forbidden []string
	}{
		{[]string{"--redis", "redis://127.0.0.1:6399/-1"}, "database -1 is negative", nil},
		{[]string{"--redis", "redis://:hunter2@127.0.0.1:6399/-3"}, "database -3 is negative", []string{"hunter2"}},
		{[]string{"--lock", "memcached-add", "--memcached", "127.0.0.1"}, "invalid memcached address 127.0.0.1: want host:port", []string{"redis://"}},
		{[]string{"--lock", "memcached-add", "--memcached", "memcached://hunter2@127.0.0.1"}, "memcached://:xxxxx@127.0.0.1", []string{"redis://", "hunter2"}},
		{[]string{"--lock", "memcached-add", "--memcached", "u:hunter2@127.0.0.1"}, "the port must be a number", []string{"redis://", "hunter2"}},
		{[]string{"--lock", "memcached-add", "--memcached", "memcache://127.0.0.1:1"}, `the scheme is "memcache"`, []string{"redis://"}},
		{[]string{"--lock", "mysql-get-lock", "--mysql", "mysql://u:hunter2@127.0.0.1:1/db?sql_mode=x"}, `option "sql_mode" is not one locklab passes on`, []string{"hunter2", "redis://"}},
		{[]string{"--lock", "mysql-get-lock", "--mysql", "mysql://u:hunter2@127.0.0.1:1/db?tls=false&init_connect=x"}, `option "init_connect"`, []string{"hunter2"}},
		{[]string{"--lock", "mysql-get-lock", "--mysql", "u:hunter2@tcp(127.0.0.1:1)/db?autocommit=0"}, `option "autocommit"`, []string{"hunter2", "redis://"}},
		{[]string{"--lock", "mysql-get-lock", "--mysql", "mysql://u:hunter2@127.0.0.1:1/db?allowAllFiles=true"}, `option "allowAllFiles"`, []string{"hunter2"}},
		{[]string{"--lock", "pg-row", "--postgres", "u:hunter2@127.0.0.1:1"}, "invalid Postgres URL u:xxxxx@127.0.0.1:1", []string{"hunter2", "redis://"}},
	} {
		code, _, stderr := cli(t, append([]string{"run", "oversell", "-q"}, tc.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%q)", tc.args, code, stderr)
		}
		oneLine(t, strings.Join(tc.args, " "), stderr, tc.want)
		for _, f := range tc.forbidden {
			if strings.Contains(stderr, f) {
				t.Errorf("%v: the message shows %q: %q", tc.args, f, stderr)
			}
		}
	}
}
