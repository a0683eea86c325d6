package cli

import (
	"context"
	"net"
	"os"
	"strconv"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sshPasswordEnv holds the viewers' password, out of the process list.
const sshPasswordEnv = "LOCKLAB_SSH_PASSWORD"

type sshFlags struct {
	addr, password, keys, hostKey string
	// roomCode: the listener admits with the room's code when nothing
	// else admits (a host's), so a wider one needs no password given.
	roomCode bool
}

func addSSHFlags(fl *pflag.FlagSet, f *sshFlags) {
	fl.StringVar(&f.addr, "ssh", "", "also serve the live view over SSH on ADDR (:2222 is loopback; 0.0.0.0:2222 needs a password or keys)")
	fl.StringVar(&f.password, "ssh-password", "", "admit SSH viewers who give this password (default $"+sshPasswordEnv+")")
	fl.StringVar(&f.keys, "ssh-authorized-keys", "", "admit SSH viewers whose key is in this authorized_keys file")
	fl.StringVar(&f.hostKey, "ssh-host-key", "", "the SSH host key, generated once if missing (default: under your config directory)")
}

// sshToServeHint is where a served race's view goes over SSH.
const sshToServeHint = "locklab --serve ADDR --ssh ADDR serves the race over HTTP with its view here and over SSH"

// sshConfig checks the SSH flags; nil when --ssh is not given.
func (f *sshFlags) sshConfig(cmd *cobra.Command) (*sshview.Config, error) {
	if f.password == "" {
		f.password = os.Getenv(sshPasswordEnv)
	}
	if f.addr == "" {
		var extra []string
		for _, n := range []string{"ssh-password", "ssh-authorized-keys", "ssh-host-key"} {
			if cmd.Flags().Changed(n) {
				extra = append(extra, "--"+n)
			}
		}
		if len(extra) > 0 {
			return nil, usagef("%s %s nothing without --ssh ADDR", flagList(extra), doesOrDo(extra))
		}
		return nil, nil
	}
	host, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		if _, perr := strconv.Atoi(f.addr); perr != nil {
			return nil, usagef("--ssh %q is not an address such as :2222 or 0.0.0.0:2222", f.addr)
		}
		host, port = "", f.addr
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, usagef("--ssh %q: the port must be a number from 0 to 65535", f.addr)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless told otherwise
	}
	c := &sshview.Config{Addr: net.JoinHostPort(host, port), Password: f.password, AuthorizedKeys: f.keys, HostKey: f.hostKey}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && c.Open() && !f.roomCode {
		return nil, usagef("--ssh %s admits anyone who reaches it: add --ssh-password (or $%s) or --ssh-authorized-keys FILE, or serve on loopback (:%s)",
			f.addr, sshPasswordEnv, port)
	}
	if f.keys != "" {
		if _, err := os.Stat(f.keys); err != nil {
			return nil, usagef("--ssh-authorized-keys: %v", err)
		}
	}
	if c.HostKey == "" {
		if c.HostKey, err = sshview.DefaultHostKey(); err != nil {
			return nil, runtimeError{err}
		}
	}
	return c, nil
}

// serveSSH starts the SSH view of stage.
func serveSSH(_ context.Context, c *sshview.Config, stage *tui.Stage, th *themes.Theme) (*sshview.Server, error) {
	c.Theme = th
	return sshview.Listen(*c, stage)
}
