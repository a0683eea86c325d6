package store_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/store"
)

// spellings are the ways a user can type a URL with user and password.
func spellings(user, pass, host string) []string {
	enc := url.UserPassword(user, pass).String()
	all := []string{
		"redis://" + user + ":" + pass + "@" + host,
		"redis://" + user + ":" + pass + "@" + host + "/0",
		"rediss://" + user + ":" + pass + "@" + host + "/1?pool_size=5",
		"redis://" + enc + "@" + host,
		"redis://:" + url.QueryEscape(pass) + "@" + host,
		user + ":" + pass + "@" + host,
		":" + pass + "@" + host,
		enc + "@" + host + "/0",
		"redis://" + host + "?password=" + pass,
		"redis://" + host + "/0?pool_size=3&password=" + url.QueryEscape(pass),
		host + "?password=" + url.QueryEscape(pass) + "&username=" + user,
		"  redis://" + user + ":" + pass + "@" + host + "  ",
	}
	// A password alone before the '@' is only that when it holds no ':';
	// "redis://00:x@h" is user 00 with password x.
	if !strings.Contains(pass, ":") {
		all = append(all, "redis://"+pass+"@"+host)
	}
	return all
}

// forms are the password and its encoded and decoded spellings.
func forms(pass string) []string {
	f := []string{pass, url.QueryEscape(pass), url.PathEscape(pass)}
	if d, err := url.PathUnescape(pass); err == nil {
		f = append(f, d)
	}
	if d, err := url.QueryUnescape(pass); err == nil {
		f = append(f, d)
	}
	return f
}

func TestRedactTheReportedLeaks(t *testing.T) {
	t.Parallel()
	for _, pass := range []string{"pa/ssLeak1", "pa#ssLeak2", "pa?ssLeak3", "pa%2FssLeak4", "pa%40ss%3ALeak5",
		"pa@ss:Leak6", "p@ss?w@rd:7/x#y", "pa ss%Leak8", "hunter2hunter2"} {
		for _, in := range spellings("alice", pass, "127.0.0.1:6379") {
			got := store.Redact(in)
			for _, f := range forms(pass) {
				if strings.Contains(got, f) {
					t.Errorf("Redact(%q) = %q holds %q", in, got, f)
				}
			}
			if !strings.Contains(got, "127.0.0.1:6379") && !strings.HasPrefix(in, "redis://"+pass) {
				t.Errorf("Redact(%q) = %q lost the address", in, got)
			}
			_, err := store.ParseURL(in)
			if err != nil {
				for _, f := range forms(pass) {
					if strings.Contains(err.Error(), f) {
						t.Errorf("ParseURL(%q): %q holds %q", in, err, f)
					}
				}
			}
		}
	}
}

func TestRedactKeepsWhatIsNotSecret(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"redis://:pw@host:6379/0":                   "redis://:xxxxx@host:6379/0",
		"rediss://user:pw@host:6380":                "rediss://user:xxxxx@host:6380",
		"redis://host:6379":                         "redis://host:6379",
		"127.0.0.1:6379":                            "redis://127.0.0.1:6379",
		"redis://:p@ss@host:6379/0":                 "redis://:xxxxx@host:6379/0",
		"alice:pw@host:6379":                        "redis://alice:xxxxx@host:6379",
		"redis://host:6379?password=pw&pool_size=5": "redis://host:6379?password=xxxxx&pool_size=5",
		"redis://:pa/ss@[::1]:6379/2":               "redis://:xxxxx@[::1]:6379/2",
		"redis://secretonly@host":                   "redis://:xxxxx@host",
	} {
		if got := store.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseURLReadsEverySpelling(t *testing.T) {
	t.Parallel()
	for _, pass := range []string{"pa/ss", "pa#ss", "pa?ss", "p@ss:w/rd?x#y", "pa ss"} {
		for _, in := range []string{
			"redis://alice:" + pass + "@127.0.0.1:6379/2",
			"alice:" + pass + "@127.0.0.1:6379/2",
			"redis://" + url.UserPassword("alice", pass).String() + "@127.0.0.1:6379/2",
			"127.0.0.1:6379/2?username=alice&password=" + url.QueryEscape(pass),
		} {
			o, err := store.ParseURL(in)
			if err != nil {
				t.Errorf("ParseURL(%q): %v", in, err)
				continue
			}
			if o.Password != pass || o.Username != "alice" || o.Addr != "127.0.0.1:6379" || o.DB != 2 {
				t.Errorf("ParseURL(%q) = user %q pass %q addr %q db %d", in, o.Username, o.Password, o.Addr, o.DB)
			}
		}
	}
	o, err := store.ParseURL("redis://host/0?pool_size=5&dial_timeout=3s")
	if err != nil || o.PoolSize != 5 {
		t.Fatalf("options: %v %+v", err, o)
	}
	for _, in := range []string{"http://:hunter2xyz@host", "redis://:hunter2xyz@host:port", "redis://:hunter2xyz@host?pool_size=x",
		"redis://:hunter2xyz@host/db", "redis://:hunter2xyz@[::1"} {
		_, err := store.ParseURL(in)
		var ue *store.URLError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q): %v", in, err)
		}
	}
}

func TestOpenNeverPrintsThePassword(t *testing.T) {
	t.Parallel()
	// Each Open waits out its dial retries: the spellings wait side by side.
	for i, in := range spellings("alice", "pa/ss#Le?ak", "127.0.0.1:1")[:6] {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			_, err := store.Open(context.Background(), store.Config{URLs: []string{in}})
			if err == nil {
				t.Fatalf("%q: opened a closed port", in)
			}
			for _, f := range forms("pa/ss#Le?ak") {
				if strings.Contains(err.Error(), f) {
					t.Errorf("Open(%q): %q holds %q", in, err, f)
				}
			}
		})
	}
}

// FuzzRedact: whatever the password and however the URL spells it, the
// printed form and ParseURL's errors never hold it, raw, encoded or decoded.
func FuzzRedact(f *testing.F) {
	for _, s := range [][3]string{{"alice", "pa/ssLeak1", "127.0.0.1:6379"}, {"", "pa#ss?@:x", "host"},
		{"u", "%2F%zz", "[::1]:1"}, {"a@b", "p:q@r/s?t#u", "h:6379/0"}} {
		f.Add(s[0], s[1], s[2], uint8(0))
	}
	f.Fuzz(func(t *testing.T, user, pass, host string, which uint8) {
		if len(pass) < 4 || strings.Contains("redis://xxxxx", pass) {
			t.Skip()
		}
		all := spellings(user, pass, host)
		in := all[int(which)%len(all)]
		// The password must be the only place its text appears, or finding
		// it elsewhere in the output proves nothing.
		// Nor may it appear in what another password's URL prints: a user
		// "\x00" printed "%00" before the mask ":xxxxx" spells "00:x".
		rest := strings.ReplaceAll(in, pass, "")
		other := strings.ReplaceAll(in, pass, "QqQq")
		for _, fm := range forms(pass) {
			if fm == "" || strings.Contains(rest, fm) || strings.Contains("rediss://"+store.Redact(rest), fm) ||
				strings.Contains(store.Redact(other), fm) {
				t.Skip()
			}
		}
		got := store.Redact(in)
		msg := ""
		if _, err := store.ParseURL(in); err != nil {
			msg = err.Error()
		}
		for _, fm := range forms(pass) {
			if strings.Contains(got, fm) {
				t.Fatalf("Redact(%q) = %q holds %q", in, got, fm)
			}
			if strings.Contains(msg, fm) {
				t.Fatalf("ParseURL(%q) error %q holds %q", in, msg, fm)
			}
		}
	})
}
