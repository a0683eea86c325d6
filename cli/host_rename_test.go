package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/locklab/locklab/workshop"
)

// TestRenameOverSSH: a participant changes their name from the SSH screen
// (n, a field, enter): a name taken, empty or too long is refused in one
// line and the field stays open; escape sequences typed into it are
// dropped; the lobby, the round's lanes, their rank and the leaderboard
// go by the new name, and the host keeps the change for the results.
func TestRenameOverSSH(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Stock = 2
	h, err := workshop.OpenHost(ctx, workshop.HostConfig{URL: srv.URL, Room: "names", Scenario: "oversell", Strategy: "safe", Params: p,
		Seed: 1, Lead: 2 * time.Second}) // a joiner that sees a round after its start sits it out
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	stage := tui.NewStage("room names", "")
	ssrv, err := sshview.Listen(sshview.Config{Addr: "127.0.0.1:0", HostKey: filepath.Join(t.TempDir(), "key"), Theme: themes.Mono(),
		Participate: participate(srv.URL, "names", workshop.NewWatch(ctx, srv.URL, "names", sshParticipantPoll))}, stage)
	if err != nil {
		t.Fatal(err)
	}
	defer ssrv.Close()
	addr := ssrv.Addr().String()
	in, out, err := sshSession(t, addr, "alice", "", 120, 40)
	if err != nil {
		t.Fatal(err)
	}
	bobIn, bob, err := sshSession(t, addr, "bob", "", 120, 40)
	if err != nil {
		t.Fatal(err)
	}
	lobby := func() []string {
		l, _ := h.Lobby(ctx)
		var names []string
		for _, a := range l {
			names = append(names, a.Name)
		}
		return names
	}
	eventually(t, "alice and bob in the lobby", func() bool { return slices.Equal(lobby(), []string{"alice", "bob"}) }, out, bob)
	eventually(t, "alice's screen", func() bool { return out.has("n your name") }, out)
	press := func(keys string) {
		t.Helper()
		if _, err := in.Write([]byte(keys)); err != nil {
			t.Fatal(err)
		}
	}
	press("n")
	eventually(t, "the name field", func() bool { return out.has("your name:") }, out)
	for _, c := range []struct{ typed, said string }{
		{"bob", `"bob" is taken in this room · esc keeps alice`},
		{"", "a name needs a letter or digit"},
		{strings.Repeat("a", 33), "33 characters: at most 32"},
		{"al ice", `"al ice": only letters, digits, - and _`},
		{"-al", `"-al": start with a letter or digit`},
	} {
		press("\x15" + c.typed) // ctrl+u empties the field
		press("\r")
		eventually(t, "the refusal: "+c.said, func() bool { return out.has(c.said) })
	}
	if l := lobby(); !slices.Equal(l, []string{"alice", "bob"}) {
		t.Fatalf("lobby after refusals: %q", l)
	}
	press("\x15al\x07ic\x1b[31me2\r") // a bell and a colour typed in: dropped
	eventually(t, "alice as alice2 in the lobby", func() bool { return slices.Equal(lobby(), []string{"alice2", "bob"}) })
	eventually(t, "the change on alice's screen", func() bool { return out.has("alice is now alice2") })
	if r := h.Renames(); len(r) != 1 || r[0] != (workshop.Rename{From: "alice", To: "alice2", Before: 1}) {
		t.Fatalf("the host saw %+v", r)
	}
	run, _, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stage.SetRound(run)
	eventually(t, "the call to fire", func() bool { return out.has("fire your 3 worker(s) now") && bob.has("fire your 3 worker(s) now") }, out, bob)
	press(" ")
	if _, err := bobIn.Write([]byte(" ")); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(run.Header.Lanes, "alice2/1") || slices.Contains(run.Header.Lanes, "alice/1") {
		t.Errorf("lanes %q: want alice2's", run.Header.Lanes)
	}
	eventually(t, "alice2's rank", func() bool { return out.has("rank ") && out.has(" of 2") })
	if !out.has("▸alice2") {
		t.Error("alice2's lanes are not marked as hers")
	}
	res := workshop.Collect("names", stage.Runs(), h.Renames())
	if !slices.ContainsFunc(res.Leaderboard, func(s workshop.Standing) bool { return s.Name == "alice2" }) ||
		!strings.Contains(res.Markdown(), "alice is alice2 from round 1 on") {
		t.Errorf("the results do not show the new name:\n%s", res.Markdown())
	}
}
