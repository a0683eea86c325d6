package cli

import (
	"errors"
	"fmt"

	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/store"
)

// usageError is a mistake in how locklab was called: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// runtimeError is a failure while doing what was asked: exit status 1.
type runtimeError struct{ error }

// startError is a run that did not start: its store could not open (see
// storeError), or the scenario refused its config (a usage error); an
// event log that could not be created says so itself.
func startError(err error) error {
	var oe *launch.OpenError
	switch {
	case errors.As(err, &oe):
		return storeError(oe.Err)
	case errors.As(err, new(usageError)), errors.As(err, new(runtimeError)):
		return err
	}
	return usageError{err}
}

// storeError is a failure to open the store: a URL that does not parse is
// a usage error, the rest (the server's own words, with a hint) a runtime one.
func storeError(err error) error {
	var ue *store.URLError
	if errors.As(err, &ue) {
		return usageError{err}
	}
	return runtimeError{err}
}
