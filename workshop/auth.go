package workshop

import (
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
)

// An attendee's batches are signed, so that whoever else can write to the
// room's Redis cannot post in its name.
//
// At join, an attendee makes an X25519 key pair and leaves the public half
// in its presence key (seen:NAME); the host makes one for its hosting and
// publishes its public half in each round, with every attendee's as it
// read it. Both sides derive the same secret (ECDH) without it ever being
// in Redis, and from it, for each round, the attendee's HMAC-SHA256 key.
// A reader of the Redis sees only public keys: it can neither sign a batch
// nor make one of another round pass. One who overwrites an attendee's
// presence key before a round opens makes the round carry the wrong key:
// the attendee sees it (its key is not the one the round names) and says
// so instead of racing, and its name shows its batches refused.

// newKey makes a key pair.
func newKey() (*ecdh.PrivateKey, error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cannot make a key: %w", err)
	}
	return k, nil
}

// keyText is a public key as it travels: hex.
func keyText(k *ecdh.PrivateKey) string { return hex.EncodeToString(k.PublicKey().Bytes()) }

// parseKey reads a public key written by keyText.
func parseKey(s string) (*ecdh.PublicKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("not a key")
	}
	return ecdh.X25519().NewPublicKey(b)
}

// batchKey is the HMAC key of name's batches in round: from the secret
// that own (one side's private key) and peer (the other's public key)
// share.
func batchKey(own *ecdh.PrivateKey, peer, round, name string) ([]byte, error) {
	pub, err := parseKey(peer)
	if err != nil {
		return nil, err
	}
	secret, err := own.ECDH(pub)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("locklab workshop batch key\x00"))
	writeField(m, round)
	writeField(m, name)
	return m.Sum(nil), nil
}

// batch is one stream entry: a run of an attendee's events and what the
// host needs to place them.
type batch struct {
	round string // the round's ID
	name  string // the attendee's
	n     int64  // counts from 1 in each round: a copy of an earlier one is refused
	mark  int64  // watermark, server µs (0: says nothing)
	sync  int64  // the clock sync's error bound, µs
	end   bool   // the last batch
	body  []byte // events, one JSON object a line
}

// sign is the batch's HMAC under key, as hex.
func (b *batch) sign(key []byte) string {
	m := hmac.New(sha256.New, key)
	b.write(m)
	return hex.EncodeToString(m.Sum(nil))
}

// verify reports whether mac is the batch's HMAC under key.
func (b *batch) verify(key []byte, mac string) bool {
	want, err := hex.DecodeString(mac)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	b.write(m)
	return hmac.Equal(m.Sum(nil), want)
}

// write feeds the batch to the MAC, every field length-prefixed so that no
// two batches read the same.
func (b *batch) write(m hash.Hash) {
	end := "0"
	if b.end {
		end = "1"
	}
	for _, s := range []string{b.round, b.name, fmt.Sprint(b.n), fmt.Sprint(b.mark), fmt.Sprint(b.sync), end} {
		writeField(m, s)
	}
	var l [8]byte
	binary.BigEndian.PutUint64(l[:], uint64(len(b.body)))
	m.Write(l[:])
	m.Write(b.body)
}

func writeField(m hash.Hash, s string) {
	var l [8]byte
	binary.BigEndian.PutUint64(l[:], uint64(len(s)))
	m.Write(l[:])
	m.Write([]byte(s))
}

// newRoundID is a round's own ID: random, so that no entry written before
// the round was opened can name it.
func newRoundID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot make a round ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
