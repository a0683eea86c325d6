package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// checkedWriter remembers the first error writing to w: output that did
// not reach its reader (a full disk, a closed pipe) fails the command
// instead of ending it with exit status 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// failed is the first write error as a failure of the command, or nil.
func (c *checkedWriter) failed(what string) error {
	if c.err == nil {
		return nil
	}
	err := c.err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // "no space left on device", not the device's name
	}
	return runtimeError{fmt.Errorf("cannot write to %s: %w", what, err)}
}

// underlying is the writer w writes to, through any checkedWriter.
func underlying(w io.Writer) io.Writer {
	if c, ok := w.(*checkedWriter); ok {
		return c.w
	}
	return w
}
