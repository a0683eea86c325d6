package workshop

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// hostile hosts one round of oversell with a safe lock for alice (2
// workers) in room on url; before is called before the round opens, during
// once it is open. It returns the round's run, ended, and the host's
// refusals.
func hostile(t *testing.T, url, room string, before func(rc *redis.Client), during func(rc *redis.Client, r *Round)) (*scenario.Run, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	def, err := scenario.Lookup("oversell")
	if err != nil {
		t.Fatal(err)
	}
	p := def.Defaults
	p.Stock, p.Retry, p.MaxRetries = 2, "full-jitter", 200
	// Each sale holds the lock a while: the round lasts long enough for
	// what a test writes into its stream meanwhile to be read by the host.
	p.Delay = event.Millis(300 * time.Millisecond)
	h, err := OpenHost(ctx, HostConfig{URL: url, Room: room, Scenario: "oversell", Strategy: "safe", Params: p, Seed: 3, Lead: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rc := client(t, url)
	defer rc.Close()
	if before != nil {
		before(rc)
	}
	errs := make(chan error, 1)
	go func() { errs <- Join(ctx, JoinConfig{URL: url, Room: room, Name: "alice", Workers: 2, Rounds: 1}) }()
	waitLobby(t, h, 1)
	run, r, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(rc, r)
	}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	return run, h.Refused()
}

func client(t *testing.T, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return redis.NewClient(o)
}

// forgedViolation is a batch body in alice's name: her first worker
// overlapping her second, at the round's start.
func forgedViolation(r *Round) string {
	return fmt.Sprintf(`{"seq":0,"t":%d,"worker":0,"kind":"violation","peer":1,"code":"overlap","msg":"forged"}`+"\n", r.Start)
}

// alices sums alice's scoreboard.
func alices(run *scenario.Run) scenario.Score {
	for _, s := range scenario.Scores(run.Header, run.Log.Events()) {
		if s.Name == "alice" {
			return s
		}
	}
	return scenario.Score{}
}

func refusedBeats(run *scenario.Run) []string {
	var out []string
	for _, e := range run.Log.Events() {
		if e.Kind == event.KindBeat && e.Code == BeatRefused {
			out = append(out, e.Msg)
		}
	}
	return out
}

// TestStreamOldEntriesIgnored: entries put in the round's stream before it
// opened — an earlier hosting's, or anyone's — are never read.
func TestStreamOldEntriesIgnored(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	run, refused := hostile(t, srv.URL, "old", func(rc *redis.Client) {
		stream := "locklab:room-old-r1:events"
		for i := range 3 {
			body := forgedViolation(&Round{Start: time.Now().UnixMicro() + 400_000})
			if err := rc.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: []any{"a", "alice", "w", 0, "s", 0, "e", body, "n", i + 1, "r", "x", "m", "00"}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond) // the round opens in a later millisecond of the server's clock
	}, nil)
	if s := alices(run); s.Violations != 0 || len(refused) != 0 {
		t.Fatalf("entries from before the round: alice has %d violation(s); refused %q", s.Violations, refused)
	}
	if s := run.Summary(); s.Violations != 0 || s.Successes != 2 {
		t.Fatalf("the round itself: %d violation(s), %d sold of 2", s.Violations, s.Successes)
	}
}

// TestStreamForgedBatchNotCounted: a batch in an attendee's name that is
// not signed with its key — even with the round's ID and a plausible MAC —
// and a copy of one of its real batches are refused, said so in the log,
// and counted nowhere.
func TestStreamForgedBatchNotCounted(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	run, refused := hostile(t, srv.URL, "forged", nil, func(rc *redis.Client, r *Round) {
		ctx := context.Background()
		stream := "locklab:" + r.RunID("forged") + ":events"
		forged := batch{round: r.ID, name: "alice", n: 1, mark: 0, body: []byte(forgedViolation(r))}
		mac := forged.sign([]byte("a key that is not alice's"))
		for _, v := range [][]any{forged.values(mac), {"a", "alice", "e", forgedViolation(r), "w", 0}} {
			if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: v}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		// Alice's own first batch, sent again.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			es, err := rc.XRange(ctx, stream, "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if e.Values["a"] == "alice" && e.Values["n"] == "1" && e.Values["m"] != mac { // alice's, not bob's first
					if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: e.Values}).Err(); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Error("alice sent no batch to copy")
	})
	if s := alices(run); s.Violations != 0 {
		t.Fatalf("a forged violation counts in alice's column: %d", s.Violations)
	}
	if s := run.Summary(); s.Violations != 0 || s.Successes != 2 {
		t.Fatalf("the round: %d violation(s), %d sold of 2: %s", s.Violations, s.Successes, s.Verdict)
	}
	want := []string{"2 batch(es) in alice's name refused: not signed with alice's key (forged); not counted",
		"1 batch(es) in alice's name refused: copies of batches already taken (replayed); not counted"}
	for _, w := range want {
		if !strings.Contains(strings.Join(refused, "\n"), w) {
			t.Errorf("refusals %q lack %q", refused, w)
		}
	}
	if beats := refusedBeats(run); len(beats) != 2 || !strings.Contains(beats[0], "forged") {
		t.Errorf("the log says %q; want the forged batch and the copy, once each", beats)
	}
}

// TestStreamOversizeEntryRefused: an entry over MaxEntryBytes in an
// attendee's name is refused without being read, and the round goes on.
func TestStreamOversizeEntryRefused(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	run, refused := hostile(t, srv.URL, "big", nil, func(rc *redis.Client, r *Round) {
		stream := "locklab:" + r.RunID("big") + ":events"
		big := batch{round: r.ID, name: "alice", n: 1, body: []byte(strings.Repeat(forgedViolation(r), 2000))}
		if err := rc.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: big.values("00")}).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if s := run.Summary(); s.Violations != 0 || s.Successes != 2 {
		t.Fatalf("the round: %d violation(s), %d sold of 2: %s", s.Violations, s.Successes, s.Verdict)
	}
	if got := strings.Join(refused, "\n"); !strings.Contains(got, "1 entr(ies) in alice's name refused unread: over 64 KiB") {
		t.Fatalf("refusals %q; want the big entry", refused)
	}
}

// TestFetchNeverReadsABigEntry: a 32 MB entry is measured on the server
// and never crosses to the host: reading past it allocates a few KiB.
// bigEntry is the size of TestFetchNeverReadsABigEntry's entry.
const bigEntry = 32 << 20

func TestFetchNeverReadsABigEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 32 MB to a Redis")
	}
	srv := storetest.Start(t)
	ctx := context.Background()
	rc := client(t, srv.URL)
	defer rc.Close()
	// An entry 32 times the 1 MB the read may allocate: reading it whole
	// could not hide. Writing it, and measuring it on the server, may take
	// longer than a client's default 3 s on a busy machine; what the read
	// allocates is under test here, not how long it takes.
	o, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute
	slow := redis.NewClient(o)
	defer slow.Close()
	const stream = "s"
	rc.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"a", "alice", "e", "small"}})
	huge := strings.Repeat("x", bigEntry)
	if err := slow.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"a", "alice", "e", huge}}).Err(); err != nil {
		t.Fatal(err)
	}
	huge = ""
	rc.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"a", "bob", "e", "after"}})
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	es, err := fetch(ctx, slow, stream, "-") // what it allocates is under test, not how long a busy machine takes
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].fields["e"] != "small" || es[1].size < bigEntry || es[1].fields["a"] != "alice" || es[2].fields["e"] != "after" {
		b, _ := json.Marshal(es)
		t.Fatalf("fetched %.300s", b)
	}
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 1<<20 {
		t.Fatalf("reading past a %d-byte entry allocated %d bytes", bigEntry, grew)
	}
	t.Logf("reading past a %d-byte entry allocated %d bytes", es[1].size, m1.TotalAlloc-m0.TotalAlloc)
}

// TestFetchBoundsAReply: many entries under the cap come a bounded
// number of bytes at a time.
func TestFetchBoundsAReply(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	ctx := context.Background()
	rc := client(t, srv.URL)
	defer rc.Close()
	body := strings.Repeat("y", MaxEntryBytes-200)
	for range 40 {
		if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "alice", "e", body}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	es, err := fetch(ctx, rc, "s", "-")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(es); n == 0 || n*MaxEntryBytes > fetchBudget+MaxEntryBytes {
		t.Fatalf("one read brought %d entries of ~64 KiB; at most %d bytes were to come", n, fetchBudget)
	}
	for _, e := range es {
		if e.size != 0 || len(e.fields["e"]) != len(body) {
			t.Fatalf("an entry under the cap was refused or cut: size %d, %d bytes", e.size, len(e.fields["e"]))
		}
	}
}
