package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// initialised fills data with a fresh data dir for a database server: a
// copy of one init made before on this machine with the same binary and
// arguments, or init's own output, which is then kept as that copy.
// Initialising takes seconds (initdb, mariadb-install-db) and every test
// that starts such a server would pay them; copying takes a fraction.
// The copies live in a directory of the user running the tests, and one
// that is not theirs alone, or is half written, is never used.
func initialised(data, bin string, args []string, init func() error) error {
	root := templateRoot()
	if root == "" {
		return init()
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return init()
	}
	kept := filepath.Join(root, filepath.Base(bin)+"-"+templateKey(bin, fi, args))
	if _, err := os.Stat(filepath.Join(kept, "complete")); err == nil {
		if copyTree(filepath.Join(kept, "data"), data) == nil {
			return nil
		}
		os.RemoveAll(data)
	}
	if err := init(); err != nil {
		return err
	}
	// Keep a copy: written beside, then renamed into place, so a reader
	// sees a whole copy or none; if another test kept one first, ours goes.
	tmp, err := os.MkdirTemp(root, ".partial-")
	if err != nil {
		return nil
	}
	if copyTree(data, filepath.Join(tmp, "data")) != nil || os.WriteFile(filepath.Join(tmp, "complete"), nil, 0o600) != nil ||
		os.Rename(tmp, kept) != nil {
		os.RemoveAll(tmp)
	}
	return nil
}

// templateKey names a kept data dir by the binary (path, size, time) and
// the arguments that made it.
func templateKey(bin string, fi os.FileInfo, args []string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s", bin, fi.Size(), fi.ModTime().UnixNano(), strings.Join(args, "\x00"))))
	return hex.EncodeToString(sum[:8])
}

// templateBase is where templateRoot makes its directory; "" for the
// system's temp dir (tests of the copies set their own).
var templateBase string

// templateRoot is the directory of kept data dirs, made for the user
// running the tests; "" when it cannot be made, or is another's, or
// others may write to it.
func templateRoot() string {
	base := templateBase
	if base == "" {
		base = reachableTemp()
	}
	if base == "" {
		base = os.TempDir()
	}
	root := filepath.Join(base, fmt.Sprintf("locklab-test-datadirs-%d", os.Geteuid()))
	if err := os.Mkdir(root, 0o755); err != nil && !os.IsExist(err) {
		return ""
	}
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return ""
	}
	return root
}

// copyTree copies a directory with its owners and modes (cp -a).
func copyTree(from, to string) error {
	out, err := exec.Command("cp", "-a", from, to).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
