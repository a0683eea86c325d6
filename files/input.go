package files

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Stdin is the name that reads standard input.
const Stdin = "-"

// Open opens the input named path for reading: a regular file, or
// standard input for "-". Anything else — a FIFO, a device, a socket, a
// directory — is refused with a *PathError before a byte is read: opening
// a FIFO would wait for a writer that may never come. Every Read returns
// ctx's error once ctx is done, within a read of the file's, or at once
// on standard input whatever it waits for.
func Open(ctx context.Context, path string) (io.ReadCloser, error) {
	if path == Stdin {
		return &stdin{ctx: ctx, r: os.Stdin, res: make(chan readResult, 1)}, nil
	}
	// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a
	// writer; a regular file reads as it would without it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi) // a socket cannot even be opened
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi)
	}
	return &file{ctx: ctx, f: f}, nil
}

func notRegular(path string, fi os.FileInfo) error {
	k := Kind(fi.Mode())
	return &PathError{Path: path, Kind: k, Msg: fmt.Sprintf("%s is %s, not a regular file: give a saved file, or - to read standard input", path, k)}
}

// file is a regular file read under a context.
type file struct {
	ctx context.Context
	f   *os.File
}

func (r *file) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.f.Read(p)
}

func (r *file) Close() error { return r.f.Close() }

// stdin reads standard input under a context. A read of a pipe or a
// terminal may wait for ever, so it is made on a goroutine of its own
// and left behind when ctx ends: the process is ending then.
type stdin struct {
	ctx     context.Context
	r       io.Reader
	res     chan readResult
	pending bool
	rest    []byte // read but not yet returned
	err     error  // the read's error, once rest is out
}

type readResult struct {
	b   []byte
	err error
}

func (s *stdin) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	if len(s.rest) == 0 && s.err == nil {
		if !s.pending {
			s.pending = true
			buf := make([]byte, max(len(p), 4096))
			go func() {
				n, err := s.r.Read(buf)
				s.res <- readResult{buf[:n], err}
			}()
		}
		select {
		case r := <-s.res:
			s.pending = false
			s.rest, s.err = r.b, r.err
		case <-s.ctx.Done():
			return 0, s.ctx.Err()
		}
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	if len(s.rest) == 0 && s.err != nil {
		err := s.err
		if n > 0 && err == io.EOF {
			return n, nil // EOF on the next call, as io.Reader allows
		}
		s.err = nil
		return n, err
	}
	return n, nil
}

// Close leaves standard input open: it is the process's.
func (s *stdin) Close() error { return nil }
