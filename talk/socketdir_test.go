package talk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/talk"
)

// TestSocketPathPassesOverADirectoryTakenByAnother: a locklab-<uid>
// directory in the temp dir that another user made first (or that others
// may write to) no longer stops a talk: the socket goes to the user's own
// cache directory; when that will not do either, the error says what is
// wrong with each.
func TestSocketPathPassesOverADirectoryTakenByAnother(t *testing.T) {
	tmp, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", cache)
	taken := filepath.Join(tmp, fmt.Sprintf("locklab-%d", os.Getuid()))
	if err := os.Mkdir(taken, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(taken, 0o777)
	why := "may be written by others"
	if os.Getuid() == 0 {
		if err := os.Chown(taken, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		os.Chmod(taken, 0o700)
		why = "belongs to another user (uid 4242)"
	}
	sock, err := talk.SocketPath("talks/x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(sock) != filepath.Join(cache, "locklab") {
		t.Fatalf("socket at %s, want it in the cache directory", sock)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the cache directory: %v %v", fi.Mode(), err)
	}
	// The cache's directory taken too: one line that says why.
	os.Chmod(filepath.Join(cache, "locklab"), 0o777)
	_, err = talk.SocketPath("talks/x.yaml")
	if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line saying %q", err, why)
	}
}
