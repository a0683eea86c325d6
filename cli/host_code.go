package cli

import (
	"fmt"
	"net"
	"strconv"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/locklab/locklab/workshop"
)

// codeAddr is where the room's code endpoint listens: --join-addr, else
// beside the SSH view when there is one, else on every interface when the
// Redis is meant to be reached from other machines (its URL names no
// loopback host), else on loopback. A port of 0 in the answer means the
// default port, with any free one as a fallback.
func codeAddr(flag, redisURL string, ssh *sshview.Config) (string, bool, error) {
	if flag != "" {
		host, port, err := net.SplitHostPort(flag)
		if err != nil {
			if _, perr := strconv.Atoi(flag); perr != nil {
				return "", false, usagef("--join-addr %q is not an address such as :7420 or 0.0.0.0:7420", flag)
			}
			host, port = "", flag
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return "", false, usagef("--join-addr %q: the port must be a number from 0 to 65535", flag)
		}
		return net.JoinHostPort(host, port), false, nil
	}
	port := strconv.Itoa(workshop.CodePort)
	if ssh != nil {
		host, _, _ := net.SplitHostPort(ssh.Addr)
		return net.JoinHostPort(host, port), true, nil
	}
	host := "127.0.0.1"
	if addr, err := store.URLAddr(redisURL); err == nil {
		h, _, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			host = ""
		}
	}
	return net.JoinHostPort(host, port), true, nil
}

// listenCode opens the code endpoint's listener at addr; fallback: any
// free port when the default one is taken (another room on this machine).
func listenCode(addr string, fallback bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil && fallback {
		host, _, _ := net.SplitHostPort(addr)
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot listen for room codes on %s: %w (choose another with --join-addr)", addr, err)
	}
	return ln, nil
}

// waysIn are the lines the host's screen shows attendees, one per way in
// and address: the room code at each address this machine is reached at
// by the listener (all non-loopback ones when it binds every interface).
func waysIn(code string, codeLn net.Addr, sshLn net.Addr, sshPass string) []string {
	var out []string
	if sshLn != nil {
		host, port := splitListen(sshLn)
		pass := "   (watch@ only watches)"
		if sshPass == code {
			pass = "   password " + code + " (watch@ only watches)"
		}
		for _, a := range workshop.Addresses(host) {
			out = append(out, fmt.Sprintf("ssh -p %s NAME@%s%s", port, bracket(a), pass))
		}
	}
	host, port := splitListen(codeLn)
	for _, a := range workshop.Addresses(host) {
		at := bracket(a)
		if port != strconv.Itoa(workshop.CodePort) {
			at = net.JoinHostPort(a, port)
		}
		out = append(out, fmt.Sprintf("locklab join %s@%s --name NAME", code, at))
	}
	return out
}
