package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/locklab/locklab/files"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/spf13/cobra"
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

// loadLogFile reads a saved event log, with errors for people.
func loadLogFile(ctx context.Context, path string) (*scenario.Loaded, error) {
	fh, err := openInput(ctx, path, "event log")
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	l, err := scenario.LoadLog(fh)
	if ctx.Err() != nil {
		return nil, runtimeError{errors.New("interrupted")}
	}
	if err != nil {
		return nil, runtimeError{fmt.Errorf("%s: %v", path, err)}
	}
	return l, nil
}

// loadTalk reads a talk file and the saved runs its scenes name. A file
// that is wrong is a usage error (exit 2), with its line.
func loadTalk(cmd *cobra.Command, path string) (*talk.Talk, []*scenario.Loaded, error) {
	t, err := talk.Load(path)
	var te *talk.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, usagef("no talk file at %s (the shipped ones are in talks/)", path)
	case errors.As(err, &te):
		return nil, nil, usageError{te}
	case err != nil:
		return nil, nil, usagef("cannot read the talk file: %v", err)
	}
	logs := make([]*scenario.Loaded, len(t.Scenes))
	for i, sc := range t.Scenes {
		if sc.Log == "" {
			continue
		}
		l, err := loadLogFile(cmd.Context(), sc.Log)
		if err != nil {
			return nil, nil, usageError{&talk.Error{File: path, Line: sc.Line, Msg: err.Error()}}
		}
		if l.Header.Scenario != sc.Scenario || l.Header.Strategy != sc.Strategy {
			return nil, nil, usageError{&talk.Error{File: path, Line: sc.Line, Msg: fmt.Sprintf(
				"log %s is a run of %s · %s, but the scene says %s · %s", sc.Log, l.Header.Scenario, l.Header.Strategy, sc.Scenario, sc.Strategy)}}
		}
		logs[i] = l
	}
	return t, logs, nil
}
