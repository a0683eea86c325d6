package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/locklab/locklab/files"
)

// openInput opens a file the user named to be read (what: "event log"):
// a regular file, or standard input for -. Anything else is a usage
// error; reads end when ctx does (Ctrl-C, SIGTERM).
func openInput(ctx context.Context, path, what string) (io.ReadCloser, error) {
	r, err := files.Open(ctx, path)
	if err != nil {
		if uerr := pathUsage("", err); uerr != nil {
			return nil, uerr
		}
		return nil, runtimeError{fmt.Errorf("cannot open the %s: %w", what, err)}
	}
	return r, nil
}
