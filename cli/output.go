package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/files"
)

// outputFile is a file a command writes in full, then renames to its name:
// created before the work starts, so a wrong path fails at once.
type outputFile struct {
	*files.Output
	what string // "recording", "JSON results": for errors
}

// newOutputFile creates the temporary file beside path, the value of --flag.
func newOutputFile(flag, path, what string) (*outputFile, error) {
	o, err := createOutput(flag, path, what)
	if err != nil {
		return nil, err
	}
	return &outputFile{Output: o, what: what}, nil
}

// commit closes the file and gives it its name.
func (o *outputFile) commit() error {
	if err := o.Close(); err != nil {
		return runtimeError{fmt.Errorf("cannot write the %s to %s: %w", o.what, o.Name(), err)}
	}
	return nil
}

// discard removes the file unless it was committed.
func (o *outputFile) discard() { o.Discard() }

// createOutput starts writing the file of --flag: a path that cannot be a
// regular file is a usage error, a file that cannot be made a failure.
func createOutput(flag, path, what string) (*files.Output, error) {
	o, err := files.Create(path)
	if err != nil {
		if uerr := pathUsage(flag, err); uerr != nil {
			return nil, uerr
		}
		return nil, runtimeError{fmt.Errorf("cannot write the %s to %s: %w", what, path, err)}
	}
	return o, nil
}

// writeOutput writes the file of --flag whole with write, or leaves the
// file that was there as it was.
func writeOutput(flag, path, what string, write func(io.Writer) error) error {
	o, err := createOutput(flag, path, what)
	if err != nil {
		return err
	}
	if err := write(o); err != nil {
		o.Discard()
		return runtimeError{fmt.Errorf("cannot write the %s to %s: %w", what, path, err)}
	}
	if err := o.Close(); err != nil {
		return runtimeError{fmt.Errorf("cannot write the %s to %s: %w", what, path, err)}
	}
	return nil
}

// checkOutputPath refuses a --flag whose path cannot become a regular
// file: its directory is missing, or it names a directory, a device, a
// FIFO, a socket or a symbolic link. Nothing is created.
func checkOutputPath(flag, path string) error {
	return pathUsage(flag, files.CheckOutput(path))
}

// pathUsage is err as a usage error naming --flag when it is a path that
// cannot be a file (or cannot be read as one); nil otherwise.
func pathUsage(flag string, err error) error {
	var pe *files.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	if flag == "" {
		return usageError{pe}
	}
	return usagef("--%s %s: %s", flag, pe.Path, pe.Msg)
}

// eventLogAt is the event log of a run starting (see launch.Start): the
// file at path, created once the store is open and kept in *fh; nil when
// path is empty.
func eventLogAt(path string, fh **files.Output) func() (io.Writer, error) {
	if path == "" {
		return nil
	}
	return func() (io.Writer, error) {
		o, err := createEventLog(path)
		if err != nil {
			return nil, err
		}
		*fh = o
		return o, nil
	}
}

// createEventLog starts the file a run's event log is written to: it
// takes its name when closed.
func createEventLog(path string) (*files.Output, error) {
	return createOutput("events", path, "event log")
}

// fileFor names the output file of one strategy when several run.
func fileFor(path, strategy string, many bool) string {
	if path == "" || !many {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + strategy + ext
}
