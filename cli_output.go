package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// outputFile is a file a command writes in full, then renames to its name:
// created before the work starts, so a wrong path fails at once.
type outputFile struct {
	f    *os.File
	path string
	what string // "recording", "JSON results": for errors
	done bool
}

// newOutputFile creates the temporary file beside path, the value of --flag.
func newOutputFile(flag, path, what string) (*outputFile, error) {
	if err := checkOutputPath(flag, path); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, runtimeError{fmt.Errorf("cannot write the %s to %s: %w", what, path, err)}
	}
	return &outputFile{f: f, path: path, what: what}, nil
}

// commit closes the file and gives it its name.
func (o *outputFile) commit() error {
	o.done = true
	err := o.f.Close()
	if err == nil {
		err = os.Chmod(o.f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.f.Name())
		return runtimeError{fmt.Errorf("cannot write the %s to %s: %w", o.what, o.path, err)}
	}
	return nil
}

// discard removes the file unless it was committed.
func (o *outputFile) discard() {
	if !o.done {
		o.f.Close()
		os.Remove(o.f.Name())
	}
}

// checkOutputPath refuses a --flag whose path cannot become a file: its
// directory is missing or it names a directory. Nothing is created.
func checkOutputPath(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("--%s %s: that is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("--%s %s: there is no directory %s", flag, path, dir)
	case !fi.IsDir():
		return usagef("--%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}
