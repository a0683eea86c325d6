package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/locklab/locklab/workshop"
)

// sshParticipantPoll is how often the participants over SSH look for a
// new round: a round starts a countdown after it opens. All of them share
// one look (a workshop.Watch), so a hundred cost the host one read of the
// room per poll, not a hundred.
const sshParticipantPoll = 250 * time.Millisecond

// sshParticipantWorkers is how many workers a participant over SSH races
// with, as join's default.
const sshParticipantWorkers = 3

// admitByCode makes the room code the SSH password of a listener wider
// than loopback that has none of its own.
func admitByCode(c *sshview.Config, code string) {
	host, _, _ := net.SplitHostPort(c.Addr)
	if ip := net.ParseIP(host); c.Open() && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		c.Password = code
	}
}

// participate seats SSH users in the room as join processes would be:
// each runs workshop.Join here, on the room's Redis, until its session
// ends; watch looks at the room for them all. The name is the SSH user's, cleaned; when it is taken, -2, -3…
// is added.
func participate(url, room string, watch *workshop.Watch) tui.Participate {
	return func(ctx context.Context, user string) (*tui.Participation, error) {
		base := workshop.CleanName(user)
		if base == "" {
			base = "guest"
		}
		for i := 1; i <= 9; i++ {
			name := base
			if i > 1 {
				suffix := fmt.Sprintf("-%d", i)
				name = base[:min(len(base), workshop.MaxName-len(suffix))] + suffix
			}
			p, err := seat(ctx, url, room, name, watch)
			var taken *workshop.NameTakenError
			if errors.As(err, &taken) {
				continue
			}
			return p, err
		}
		return nil, fmt.Errorf("the names %s to %s-9 are all taken in this room: connect as another user (ssh OTHER@HOST)", base, base)
	}
}

// seat starts one participant's joiner and waits until it is in the room
// or has failed.
func seat(ctx context.Context, url, room, name string, watch *workshop.Watch) (*tui.Participation, error) {
	fire := make(chan struct{}, 1)
	said := &tui.Said{}
	done := make(chan struct{})
	errs := make(chan error, 1)
	renames := make(chan workshop.RenameRequest)
	var left error // why the joiner ended, once done is closed
	go func() {
		defer close(done)
		defer func() { left = <-errs; errs <- left }()
		errs <- workshop.Join(ctx, workshop.JoinConfig{URL: url, Room: room, Name: name, Workers: sshParticipantWorkers,
			Tool: "locklab " + version + " (ssh)", Out: said, Fire: fire, Rename: renames, Watch: watch})
	}()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for said.Last() == "" {
		select {
		case <-done:
			if err := <-errs; err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s left the room before the first round", name)
		case <-t.C:
		}
	}
	return &tui.Participation{Name: name, Fire: fire, Said: said, Done: done, Rename: renamer(renames, done),
		Left: func() error { <-done; return left }}, nil
}

// renamer asks the joiner for a new name and waits for its answer.
func renamer(renames chan<- workshop.RenameRequest, done <-chan struct{}) func(context.Context, string) error {
	return func(ctx context.Context, name string) error {
		reply := make(chan error, 1)
		select {
		case renames <- workshop.RenameRequest{Name: name, Reply: reply}:
		case <-done:
			return errors.New("you are no longer in the room")
		case <-ctx.Done():
			return errors.New("the room did not answer in time: try again")
		}
		select {
		case err := <-reply:
			return err
		case <-done:
			return errors.New("you are no longer in the room")
		case <-ctx.Done():
			return errors.New("the room did not answer in time: try again")
		}
	}
}
