package workshop

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// The round's stream is read in bounded pieces: anyone who can write to the
// Redis can add an entry of any size, and go-redis reads a reply whole. So
// the host never asks for entries as they are: a script on the server
// measures each entry first and sends, in place of one over MaxEntryBytes,
// only its ID, its size and the name it claims. A reply holds at most
// fetchCount entries and, past its first, no more than fetchBudget bytes.
const (
	// MaxEntryBytes bounds one entry (one attendee's batch): its fields'
	// names and values, each counted 16 bytes more so that many small
	// fields weigh too.
	MaxEntryBytes = 64 << 10
	fetchCount    = 64
	fetchBudget   = 1 << 20
	// maxQueued bounds an attendee's events waiting for the others'
	// watermarks; past it, its batches are refused.
	maxQueued = 1 << 18
)

// fetchScript is XRANGE with each entry's size checked on the server.
// KEYS[1]: the stream; ARGV: start (XRANGE's: an ID, or "(" and an ID),
// count, the most an entry may weigh, the most a reply may.
var fetchScript = redis.NewScript(`
local es = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
local most, budget = tonumber(ARGV[3]), tonumber(ARGV[4])
local out, total = {}, 0
for _, e in ipairs(es) do
  local f, size = e[2], 0
  for i = 1, #f do size = size + #f[i] + 16 end
  if size > most then
    local name = ''
    for i = 1, #f - 1, 2 do
      if f[i] == 'a' and #f[i + 1] <= 64 then name = f[i + 1] end
    end
    out[#out + 1] = {e[1], {'!size', tostring(size), 'a', name}}
  else
    if #out > 0 and total + size > budget then break end
    total = total + size
    out[#out + 1] = e
  end
end
return out
`)

// entry is one stream entry as fetched: its fields, or, when it was too
// big to fetch, its size.
type entry struct {
	id     string
	fields map[string]string
	size   int64 // > 0: refused unread
}

// fetch reads up to fetchCount entries of stream from start (XRANGE's
// syntax), never one over MaxEntryBytes.
func fetch(ctx context.Context, rc store.Redis, stream, start string) ([]entry, error) {
	res, err := fetchScript.Run(ctx, rc, []string{stream}, start, fetchCount, MaxEntryBytes, fetchBudget).Slice()
	if err != nil {
		if err == redis.Nil {
			return nil, nil
		}
		return nil, err
	}
	out := make([]entry, 0, len(res))
	for _, r := range res {
		pair, ok := r.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("unexpected reply to the stream's read")
		}
		id, _ := pair[0].(string)
		vals, _ := pair[1].([]any)
		e := entry{id: id, fields: make(map[string]string, len(vals)/2)}
		for i := 0; i+1 < len(vals); i += 2 {
			k, _ := vals[i].(string)
			v, _ := vals[i+1].(string)
			e.fields[k] = v
		}
		if s, ok := e.fields["!size"]; ok {
			e.size, _ = strconv.ParseInt(s, 10, 64)
			e.size = max(e.size, 1)
		}
		out = append(out, e)
	}
	return out, nil
}

// entryValues are a signed batch's fields, for XADD.
func (b *batch) values(mac string) []any {
	v := []any{"r", b.round, "a", b.name, "n", b.n, "w", b.mark, "s", b.sync, "e", b.body, "m", mac}
	if b.end {
		v = append(v, "end", "1")
	}
	return v
}

// parseBatch reads a batch from an entry's fields, with its MAC; false
// when a field is missing or malformed.
func parseBatch(f map[string]string) (batch, string, bool) {
	var b batch
	var err1, err2, err3 error
	b.round, b.name, b.body = f["r"], f["a"], []byte(f["e"])
	b.n, err1 = strconv.ParseInt(f["n"], 10, 64)
	b.mark, err2 = strconv.ParseInt(f["w"], 10, 64)
	b.sync, err3 = strconv.ParseInt(f["s"], 10, 64)
	b.end = f["end"] == "1"
	mac, ok := f["m"]
	return b, mac, ok && err1 == nil && err2 == nil && err3 == nil && b.n > 0
}

// Why an entry is refused.
const (
	refusedForged   = "forged"   // not signed with the attendee's key
	refusedReplayed = "replayed" // a copy of a batch already taken
	refusedSize     = "too big"  // over MaxEntryBytes, never read
	refusedStranger = "stranger" // in the name of no attendee of the round
	refusedRound    = "another round"
	refusedFlood    = "flood" // past maxQueued events waiting
)

// refusals tallies refused entries by reason and claimed name; names are
// only the round's attendees' (others are counted as one), so the tally
// stays as small as the round whatever is written.
type refusals struct {
	n map[[2]string]int
}

// add counts one; true the first time for this reason and name.
func (r *refusals) add(reason, name string) bool {
	if r.n == nil {
		r.n = map[[2]string]int{}
	}
	k := [2]string{reason, name}
	r.n[k]++
	return r.n[k] == 1
}

// lines says what was refused, one line per reason and name.
func (r *refusals) lines() []string {
	var out []string
	for k, n := range r.n {
		out = append(out, refusedLine(k[0], k[1], n))
	}
	sort.Strings(out)
	return out
}

func refusedLine(reason, name string, n int) string {
	who := "in " + name + "'s name"
	if name == "" {
		who = "in the name of no attendee"
	}
	switch reason {
	case refusedForged:
		return fmt.Sprintf("%d batch(es) %s refused: not signed with %s's key (forged); not counted", n, who, name)
	case refusedReplayed:
		return fmt.Sprintf("%d batch(es) %s refused: copies of batches already taken (replayed); not counted", n, who)
	case refusedSize:
		return fmt.Sprintf("%d entr(ies) %s refused unread: over %d KiB", n, who, MaxEntryBytes>>10)
	case refusedStranger:
		return fmt.Sprintf("%d entr(ies) %s ignored: not an attendee of this round", n, who)
	case refusedRound:
		return fmt.Sprintf("%d entr(ies) %s ignored: of another round", n, who)
	case refusedFlood:
		return fmt.Sprintf("%d batch(es) %s refused: more than %d events waiting", n, who, maxQueued)
	}
	return fmt.Sprintf("%d entr(ies) %s refused: %s", n, who, reason)
}

// firstLine is what the log says the first time an entry is refused.
func firstLine(reason, name string, size int64) string {
	s := strings.Replace(refusedLine(reason, name, 1), "1 batch(es)", "a batch", 1)
	s = strings.Replace(s, "1 entr(ies)", "an entry", 1)
	if reason == refusedSize {
		s = strings.Replace(s, "unread:", fmt.Sprintf("unread: %d bytes,", size), 1)
	}
	return s
}
