package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
	"github.com/spf13/cobra"
)

// workshopURL is --redis, else $LOCKLAB_REDIS_URL: one real server.
func workshopURL(cmd *cobra.Command, flag string) (string, error) {
	url := flag
	if url == "" {
		url = os.Getenv("LOCKLAB_REDIS_URL")
	}
	if url == "" {
		return "", usagef("%s needs the shared Redis: --redis redis://host:port (or $LOCKLAB_REDIS_URL)", cmd.Name())
	}
	if _, err := store.URLAddr(url); err != nil {
		return "", usageError{err}
	}
	return url, nil
}

// workshopError words a failure to reach the shared Redis for people on
// other machines: the embedded store is no answer there.
func workshopError(err error) error {
	var ce *store.ConnectError
	if errors.As(err, &ce) {
		return runtimeError{fmt.Errorf("cannot reach the shared Redis at %s (%s): is it running, and does it listen on an address this machine reaches (bind, protected-mode, firewall)?",
			ce.Addr, store.Scrub(ce.Err.Error(), ""))}
	}
	return storeError(err)
}

// parseCodeArg reads join's CODE@HOST[:PORT].
func parseCodeArg(arg string) (code, hostport string, err error) {
	c, host, ok := strings.Cut(arg, "@")
	if !ok || host == "" {
		return "", "", usagef("%q is not a room: give CODE@HOST as the host's screen shows it, e.g. K7QX2M@10.0.0.5", arg)
	}
	code = workshop.CleanCode(c)
	if code == "" {
		return "", "", usagef("%q is not a room code: the host's screen shows one of 6 letters and digits", c)
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(workshop.CodePort))
	}
	return code, host, nil
}
