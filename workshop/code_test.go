package workshop

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// TestCodeEndpoint: the right code (in any case) answers the room and its
// Redis at the address the attendee reached; a wrong one is "no room";
// a flood of wrong ones is refused for a while, the right one still
// answered.
func TestCodeEndpoint(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	code := NewCode()
	if CleanCode(code) != code || len(code) != 6 {
		t.Fatalf("code %q", code)
	}
	s := ServeCode(ln, code, "redis://:secret@0.0.0.0:6390/2", "r1")
	defer s.Close()
	ctx := context.Background()
	a, err := Resolve(ctx, CleanCode(strings.ToLower(code)), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if a.Room != "r1" || a.Redis != "redis://:secret@127.0.0.1:6390/2" {
		t.Errorf("answer %+v", a)
	}
	wrong := "ZZZZZZ"
	if wrong == code {
		wrong = "YYYYYY"
	}
	var none *NoRoomError
	if _, err := Resolve(ctx, wrong, ln.Addr().String()); !errors.As(err, &none) || err.Error() != "no room "+wrong+" at "+ln.Addr().String() {
		t.Errorf("a wrong code: %v", err)
	}
	refused := false
	for range 40 {
		if _, err := Resolve(ctx, wrong, ln.Addr().String()); err != nil && strings.Contains(err.Error(), "refuses codes for a moment") {
			refused = true
			break
		}
	}
	if !refused {
		t.Error("40 wrong codes in a row were all answered")
	}
	if _, err := Resolve(ctx, code, ln.Addr().String()); err != nil {
		t.Errorf("the right code during a flood of wrong ones: %v", err)
	}
}

// TestReachableURL: a Redis URL naming this machine is given with the
// address the attendee reached it at; one naming another host is kept.
func TestReachableURL(t *testing.T) {
	t.Parallel()
	at := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 7420}
	for in, want := range map[string]string{
		"redis://0.0.0.0:6379":           "redis://192.0.2.7:6379",
		"redis://localhost":              "redis://192.0.2.7:6379",
		"redis://:pw@127.0.0.1:6380/1":   "redis://:pw@192.0.2.7:6380/1",
		"redis://redis.example.org:6379": "redis://redis.example.org:6379",
		"rediss://203.0.113.5:6379":      "rediss://203.0.113.5:6379",
	} {
		if got := ReachableURL(in, at); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

// TestCleanName: a client's name keeps letters, digits, '-' and '_', no
// control sequence, at most 32 characters.
func TestCleanName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"alice":                       "alice",
		"\x1b[31mbob\x07":             "31mbob",
		"--x":                         "x",
		"émile.z":                     "milez",
		"...":                         "",
		strings.Repeat("abcdefgh", 6): strings.Repeat("abcdefgh", 4),
	} {
		got := CleanName(in)
		if got != want || (got != "" && CheckName("name", got) != nil) {
			t.Errorf("CleanName(%q) = %q, want %q", in, got, want)
		}
	}
}
