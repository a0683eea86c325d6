package cli

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/workshop"
)

var joinLine = regexp.MustCompile(`join with: locklab join ([A-Z0-9]{6})@(\S+) --name NAME`)

// TestJoinByRoomCode: a host prints its room code at its address; a joiner
// given only CODE@HOST (no Redis URL) races in its round; a wrong code is
// "no room CODE at HOST", exit 1.
func TestJoinByRoomCode(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	host := exec.Command(os.Args[0], "host", "--redis", srv.URL, "--room", "coded", "--attendees", "1", "--join-addr", "127.0.0.1:0",
		"--lock", "safe", "--stock", "2")
	host.Env = append(os.Environ(), "LOCKLAB_TEST_MAIN=1")
	pipe, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	host.Stderr = host.Stdout
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	sc := bufio.NewScanner(pipe)
	var code, at string
	var seen []string
	for code == "" && sc.Scan() {
		seen = append(seen, sc.Text())
		if m := joinLine.FindStringSubmatch(sc.Text()); m != nil {
			code, at = m[1], m[2]
		}
	}
	if code == "" {
		t.Fatalf("the host printed no join line:\n%s", strings.Join(seen, "\n"))
	}
	var wrong bytes.Buffer
	bad := locklabWith(t, &wrong, nil, "join", "ZZZZZZ@"+at, "--name", "mallory")
	if err := bad.Wait(); bad.ProcessState.ExitCode() != 1 || !strings.Contains(wrong.String(), "no room ZZZZZZ at "+at) {
		t.Errorf("a wrong code: %v, %q; want exit 1 and \"no room ZZZZZZ at %s\"", err, wrong.String(), at)
	}
	var out bytes.Buffer
	alice := locklabWith(t, &out, nil, "join", strings.ToLower(code)+"@"+at, "--name", "alice", "--workers", "2", "--rounds", "1")
	waitProc(t, "join", alice, &out)
	if !strings.Contains(out.String(), "round 1: alice's 2 worker(s): buys") {
		t.Errorf("alice did not race in the coded room:\n%s", out.String())
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	if err := host.Wait(); err != nil || !strings.Contains(strings.Join(seen, "\n"), "alice joined") {
		t.Errorf("host: %v\n%s", err, strings.Join(seen, "\n"))
	}
}

// TestJoinLineNamesReachableAddresses: a listener on every interface is
// shown at this machine's non-loopback addresses, never 0.0.0.0 or
// 127.0.0.1; one on loopback at 127.0.0.1; one on an address at it.
func TestJoinLineNamesReachableAddresses(t *testing.T) {
	t.Parallel()
	all := waysIn("K7QX2M", &net.TCPAddr{IP: net.IPv4zero, Port: workshop.CodePort}, &net.TCPAddr{IP: net.IPv6unspecified, Port: 2222}, "K7QX2M")
	own := workshop.Addresses("")
	if len(own) == 1 && own[0] == "127.0.0.1" {
		t.Skip("this machine has no address but loopback")
	}
	for _, l := range all {
		if strings.Contains(l, "0.0.0.0") || strings.Contains(l, "127.0.0.1") || strings.Contains(l, "[::]") {
			t.Errorf("%q: not an address anyone reaches this machine at", l)
		}
	}
	if !strings.Contains(strings.Join(all, "\n"), "locklab join K7QX2M@"+bracket(own[0])+" --name NAME") {
		t.Errorf("no join line at %s:\n%s", own[0], strings.Join(all, "\n"))
	}
	if got := waysIn("K7QX2M", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7421}, nil, ""); len(got) != 1 || got[0] != "locklab join K7QX2M@127.0.0.1:7421 --name NAME" {
		t.Errorf("loopback: %q", got)
	}
	if got := waysIn("K7QX2M", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 9), Port: workshop.CodePort}, nil, ""); len(got) != 1 || got[0] != "locklab join K7QX2M@192.0.2.9 --name NAME" {
		t.Errorf("one address: %q", got)
	}
}
