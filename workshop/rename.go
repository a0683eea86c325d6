package workshop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/untrusted"
	"github.com/redis/go-redis/v9"
)

// RenameRequest asks a joiner to go by Name from now on; Reply (buffered)
// receives nil, or why not in one line.
type RenameRequest struct {
	Name  string
	Reply chan<- error
}

// Rename is a name change the host saw: the attendee whose presence
// carries one key was listed as From, then as To, from round Before on.
type Rename struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Before int    `json:"before_round"`
}

// presence keeps a joiner in the room's lobby under its current name.
type presence struct {
	rc      store.Redis
	room    *store.Store
	token   string // the joiner's public key (see auth.go)
	workers int

	mu   sync.Mutex
	name string
}

func (p *presence) seen(name string) string { return p.room.Key("seen:" + name) }

// claim takes name if nobody has it, and enters the lobby under it.
func (p *presence) claim(ctx context.Context, name string) (bool, error) {
	ok, err := p.rc.SetNX(ctx, p.seen(name), p.token, presentTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	p.mu.Lock()
	p.name = name
	p.mu.Unlock()
	return true, p.rc.HSet(ctx, p.room.Key("lobby"), name, p.workers).Err()
}

// renew keeps the presence alive until ctx ends.
func (p *presence) renew(ctx context.Context) {
	t := time.NewTicker(renewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.mu.Lock()
			p.rc.Set(ctx, p.seen(p.name), p.token, presentTTL)
			p.rc.HSet(ctx, p.room.Key("lobby"), p.name, p.workers)
			p.mu.Unlock()
		}
	}
}

// leave takes the presence out of the lobby.
func (p *presence) leave() {
	c, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rc.HDel(c, p.room.Key("lobby"), p.name)
	p.rc.Del(c, p.seen(p.name))
}

// move takes the name to and gives back the current one, in one step for
// whoever reads the lobby.
func (p *presence) move(ctx context.Context, to string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ok, err := p.rc.SetNX(ctx, p.seen(to), p.token, presentTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	from := p.name
	_, err = p.rc.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.HSet(ctx, p.room.Key("lobby"), to, p.workers)
		tx.HDel(ctx, p.room.Key("lobby"), from)
		tx.Del(ctx, p.seen(from))
		return nil
	})
	if err != nil {
		p.rc.Del(ctx, p.seen(to))
		return false, err
	}
	p.name = to
	return true, nil
}

// CheckNewName says in one line why name cannot be a participant's, or
// nil; control characters are the caller's to clean.
func CheckNewName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return errors.New("a name needs a letter or digit")
	case n > MaxName:
		return fmt.Errorf("%d characters: at most %d", n, MaxName)
	case name[0] == '-' || name[0] == '_':
		return fmt.Errorf("%q: start with a letter or digit", untrusted.Line(name))
	case !nameRE.MatchString(name):
		return fmt.Errorf("%q: only letters, digits, - and _", untrusted.Line(name))
	}
	return nil
}

// rename makes to this joiner's name, if it is free.
func (j *joiner) rename(ctx context.Context, to string) error {
	if err := CheckNewName(to); err != nil {
		return err
	}
	from := j.cfg.Name
	if to == from {
		return nil
	}
	ok, err := j.p.move(ctx, to)
	if err != nil {
		return fmt.Errorf("the room's Redis did not take the new name: %w", err)
	}
	if !ok {
		return fmt.Errorf("%q is taken in this room", to)
	}
	j.cfg.Name = to
	fmt.Fprintf(j.cfg.Out, "%s is now %s in room %q\n", from, to, j.cfg.Room)
	return nil
}
