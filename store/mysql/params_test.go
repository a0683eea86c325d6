package mysql

import (
	"strings"
	"testing"
)

// TestMySQLURLsSendTheServerNoStatement: the driver turns every parameter
// it does not know into a SET statement; locklab passes on only its
// connection parameters, so no URL sets anything on the server.
func TestMySQLURLsSendTheServerNoStatement(t *testing.T) {
	t.Parallel()
	for raw, refused := range map[string]bool{
		"mysql://u:p@h:3306/db?tls=false&timeout=5s&charset=utf8mb4": false,
		"mariadb://u:p@h/d%2Fb?collation=utf8mb4_general_ci":         false,
		"u:p@tcp(h:3306)/db?readTimeout=1s":                          false,
		"mysql://u:p@h/db?sql_mode=ANSI":                             true,
		"mysql://u:p@h/db?tls=false&foreign_key_checks=0":            true,
		"u:p@tcp(h:3306)/db?max_execution_time=1":                    true,
		"mysql://u:p@h/db?multiStatements=true":                      true,
	} {
		cfg, err := Config(raw)
		if refused {
			if err == nil || !strings.Contains(err.Error(), "not one locklab passes on") {
				t.Errorf("%s: %v, want refused", raw, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if len(cfg.Params) > 0 {
			t.Errorf("%s: the server would be sent SET %v", raw, cfg.Params)
		}
		if cfg.User != "u" || cfg.Passwd != "p" || cfg.Addr == "" {
			t.Errorf("%s: read as %+v", raw, cfg)
		}
	}
	cfg, _ := Config("mariadb://u:p@h/d%2Fb")
	if cfg.DBName != "d/b" || cfg.Addr != "h:3306" {
		t.Errorf("database %q at %q", cfg.DBName, cfg.Addr)
	}
}
