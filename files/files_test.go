package files_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/files"
)

// special makes each kind of path an output must not replace.
func special(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	paths["fifo"] = fifo
	sock := filepath.Join(dir, "sock")
	if ln, err := net.Listen("unix", sock); err == nil {
		t.Cleanup(func() { ln.Close() })
		paths["socket"] = sock
	}
	paths["directory"] = dir
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	paths["symlink"] = link
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		paths["device"] = dev
	} else {
		paths["device"] = "/dev/null" // not root: the system's own
	}
	return paths
}

func TestOutputRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for kind, path := range special(t, dir) {
		before, _ := os.Lstat(path)
		if err := files.WriteFile(path, []byte("x")); !files.IsPathError(err) {
			t.Errorf("%s %s: %v, want a path error", kind, path, err)
		}
		after, err := os.Lstat(path)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s: the path changed: %v → %v (%v)", kind, before.Mode(), after.Mode(), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); err == nil {
		t.Error("a write went through the symbolic link")
	}
	if err := files.WriteFile(filepath.Join(dir, "missing", "x"), nil); !files.IsPathError(err) {
		t.Errorf("a missing directory: %v", err)
	}
}

func TestOutputIsAtomicAndKeepsTheMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := files.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "new")
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("the file changed before Close: %q", b)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after Close: %q, mode %v", b, fi.Mode().Perm())
	}
	// A discarded file leaves the old one, and no temporary file.
	o, _ = files.Create(path)
	io.WriteString(o, "half")
	o.Discard()
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("discard changed the file: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// A path that became a link meanwhile is not renamed over.
	o, _ = files.Create(path)
	os.Remove(path)
	os.Symlink("/etc/passwd", path)
	if err := o.Close(); !files.IsPathError(err) {
		t.Fatalf("closed over a symbolic link: %v", err)
	}
}

func TestOpenRefusesAFIFOAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for kind, path := range special(t, dir) {
		if kind == "symlink" {
			continue // to nothing: not found
		}
		done := make(chan error, 1)
		go func() {
			r, err := files.Open(context.Background(), path)
			if err == nil {
				r.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !files.IsPathError(err) {
				t.Errorf("%s: %v, want a path error", kind, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: Open waited", kind)
		}
	}
}

func TestStdinReadEndsWithItsContext(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	old := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = old }()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := files.Open(ctx, "-")
	if err != nil {
		t.Fatal(err)
	}
	pw.Write([]byte("abc"))
	b := make([]byte, 2)
	if n, err := r.Read(b); n != 2 || err != nil || string(b) != "ab" {
		t.Fatalf("read %q %v", b[:n], err)
	}
	if n, err := r.Read(b); n != 1 || err != nil || b[0] != 'c' {
		t.Fatalf("read %q %v", b[:n], err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := r.Read(b); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("a read of a silent pipe: %v after %v", err, time.Since(start))
	}
}
