// Package files opens what locklab reads and writes by name. An output is
// written whole to a temporary file beside its path and renamed over it
// once complete, and only ever over a regular file: never over a device,
// a FIFO, a socket, a directory or a symbolic link. An input is a regular
// file (or standard input, named "-"), read so that a cancelled context
// ends a read at once, even when nothing arrives.
package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// PathError is a path that cannot be read or written as a file: its kind
// (a device, a FIFO, …) or a missing directory. It is the caller's
// mistake, not a failure: nothing was opened or created.
type PathError struct {
	Path string
	Kind string // what the path is ("a FIFO (named pipe)"), when it exists
	Msg  string
}

func (e *PathError) Error() string { return e.Msg }

// newFileMode is the mode of an output that did not exist before.
const newFileMode = 0o644

// CheckOutput reports whether path can become a regular file: its
// directory exists and path is a regular file or nothing yet. Nothing is
// created.
func CheckOutput(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Lstat(path); err == nil {
		if err := outputKind(path, fi); err != nil {
			return err
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return &PathError{Path: path, Msg: fmt.Sprintf("there is no directory %s", dir)}
	case !fi.IsDir():
		return &PathError{Path: path, Msg: fmt.Sprintf("%s is not a directory", dir)}
	}
	return nil
}

// outputKind refuses an existing path that is not a regular file.
func outputKind(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return &PathError{Path: path, Kind: Kind(m), Msg: fmt.Sprintf("that is a symbolic link (to %s); locklab replaces a file whole and never writes through a link: give the file's own path", to)}
	case m.IsDir():
		return &PathError{Path: path, Kind: Kind(m), Msg: "that is a directory; give a file name"}
	}
	return &PathError{Path: path, Kind: Kind(m), Msg: fmt.Sprintf("that is %s, not a regular file; give a file name", Kind(m))}
}

// Kind names what a file mode says a path is, with its article.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Output is a file being written: a temporary file beside its path until
// Close gives it its name. It is an io.WriteCloser.
type Output struct {
	mu   sync.Mutex // a writer may still write when the file is closed
	f    *os.File
	path string
	mode fs.FileMode
	done bool
	err  error // the first write error
}

// Create starts writing the file at path. A path that cannot become a
// regular file is a *PathError.
func Create(path string) (*Output, error) {
	if err := CheckOutput(path); err != nil {
		return nil, err
	}
	mode := fs.FileMode(newFileMode)
	if fi, err := os.Lstat(path); err == nil {
		mode = fi.Mode().Perm() // a file replaced keeps its permissions
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &Output{f: f, path: path, mode: mode}, nil
}

// Name is the path the file will have.
func (o *Output) Name() string { return o.path }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return 0, os.ErrClosed
	}
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.f.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// Close gives the complete file its name, replacing the regular file
// there, if any. When a write failed, or the path has meanwhile become
// something other than a regular file, nothing is renamed and the
// temporary file is removed.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	o.done = true
	err := o.err
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(o.f.Name(), o.mode)
	}
	if err == nil {
		if fi, lerr := os.Lstat(o.path); lerr == nil {
			err = outputKind(o.path, fi) // it changed since Create
		}
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.f.Name())
	}
	return err
}

// Discard removes the file unless Close already named it.
func (o *Output) Discard() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	os.Remove(o.f.Name())
}

// WriteFile writes b as the file at path, as Create and Close do.
func WriteFile(path string, b []byte) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := o.Write(b); err != nil {
		o.Discard()
		return err
	}
	return o.Close()
}

// IsPathError reports whether err is a path that cannot be a file.
func IsPathError(err error) bool {
	var pe *PathError
	return errors.As(err, &pe)
}
