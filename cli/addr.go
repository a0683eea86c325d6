package cli

import (
	"net"
	"strconv"
	"strings"
)

// splitListen is the host and port a listener is on; an unspecified host
// (every interface) reads 0.0.0.0, or empty for IPv6's.
func splitListen(a net.Addr) (host, port string) {
	host, port, _ = net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "0.0.0.0"
		} else {
			host = ""
		}
	}
	return host, port
}

// bracket puts an IPv6 address in brackets, as ssh and URLs want it.
func bracket(a string) string {
	if strings.Contains(a, ":") {
		return "[" + a + "]"
	}
	return a
}

// checkAddrFlag refuses a --flag that is not host:port.
func checkAddrFlag(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--%s %q is not host:port, e.g. 127.0.0.1:8080", flag, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--%s %q: the port must be a number from 0 to 65535", flag, addr)
	}
	return nil
}

// loopback reports whether addr listens on this machine only.
func loopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
