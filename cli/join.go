package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/locklab/locklab/workshop"
	"github.com/spf13/cobra"
)

// skewEnv shifts the clock join would stamp its events with, to show that
// the Redis server's clock, not the machine's, places them.
const skewEnv = "LOCKLAB_CLOCK_SKEW"

// missEnv makes join's clock sync miss the server's clock by a duration
// its error bound does not admit, to show that a lock's hand-overs between
// machines are ordered by cause, not by the sync.
const missEnv = "LOCKLAB_CLOCK_MISS"

type joinFlags struct {
	redis   string
	room    string
	name    string
	workers int
	rounds  int
}

func newJoinCmd() *cobra.Command {
	f := &joinFlags{}
	cmd := &cobra.Command{
		Use:   "join CODE@HOST --name NAME",
		Short: "Race with your own workers in the round a host opens on a shared Redis",
		Long: "join takes part in a workshop race: the host (locklab host --redis URL) picks the scenario\n" +
			"and the lock; every round it opens, your workers race everyone else's on the same Redis,\n" +
			"and their events appear on the host's screen under your name. The host's screen shows\n" +
			"its room code and address (CODE@HOST): the host tells join its Redis; --redis URL instead\n" +
			"goes to the Redis directly.",
		Example: "  locklab join K7QX2M@10.0.0.5 --name alice\n" +
			"  locklab join --redis redis://10.0.0.5:6379 --name bob --workers 5",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("join takes one room, CODE@HOST (got %d arguments): locklab join CODE@HOST --name NAME", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.redis, "redis", "", "the host's Redis, redis://[:password@]host:port/db (default $LOCKLAB_REDIS_URL)")
	fl.StringVar(&f.room, "room", workshop.DefaultRoom, "the host's room (several hosts can share one Redis)")
	fl.StringVar(&f.name, "name", "", "your name on the host's screen")
	fl.IntVar(&f.workers, "workers", 3, fmt.Sprintf("your workers in each round, 1 to %d", workshop.MaxWorkers))
	fl.IntVar(&f.rounds, "rounds", 0, "leave after this many rounds (default: stay until Ctrl-C)")
	return cmd
}

func (f *joinFlags) run(cmd *cobra.Command, args []string) error {
	var code, at string
	if len(args) == 1 {
		var err error
		if code, at, err = parseCodeArg(args[0]); err != nil {
			return err
		}
		for _, n := range []string{"redis", "room"} {
			if cmd.Flags().Changed(n) {
				return usagef("the room code names the room and its Redis: leave out --%s, or the code", n)
			}
		}
	}
	var url string
	var err error
	if code == "" {
		if f.redis == "" && os.Getenv("LOCKLAB_REDIS_URL") == "" {
			return usagef("join needs the room: locklab join CODE@HOST --name NAME, as the host's screen shows it (or --redis URL)")
		}
		if url, err = workshopURL(cmd, f.redis); err != nil {
			return err
		}
	}
	if f.name == "" {
		return usagef("join needs your name: --name NAME (it labels your lanes on the host's screen)")
	}
	if err := workshop.CheckName("name", f.name); err != nil {
		return usageError{err}
	}
	if err := workshop.CheckName("room", f.room); err != nil {
		return usageError{err}
	}
	if f.workers < 1 || f.workers > workshop.MaxWorkers {
		return usagef("--workers must be between 1 and %d (got %d)", workshop.MaxWorkers, f.workers)
	}
	if f.rounds < 0 {
		return usagef("--rounds must be 0 (stay) or more (got %d)", f.rounds)
	}
	if code != "" {
		a, err := workshop.Resolve(cmd.Context(), code, at)
		var none *workshop.NoRoomError
		if errors.As(err, &none) {
			none.Host = strings.TrimPrefix(args[0][strings.Index(args[0], "@"):], "@") // as typed
		}
		if err != nil {
			return runtimeError{err}
		}
		url, f.room = a.Redis, a.Room
	}
	var skew time.Duration
	if s := os.Getenv(skewEnv); s != "" {
		if skew, err = time.ParseDuration(s); err != nil {
			return usagef("$%s: %q is not a duration such as 3s or -2s", skewEnv, s)
		}
	}
	var miss time.Duration
	if s := os.Getenv(missEnv); s != "" {
		if miss, err = time.ParseDuration(s); err != nil {
			return usagef("$%s: %q is not a duration such as 20ms or -20ms", missEnv, s)
		}
	}
	err = workshop.Join(cmd.Context(), workshop.JoinConfig{URL: url, Room: f.room, Name: f.name, Workers: f.workers,
		Tool: "locklab " + version, Skew: skew, Miss: miss, Rounds: f.rounds, Out: cmd.OutOrStdout()})
	var taken *workshop.NameTakenError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &taken):
		return usageError{err}
	}
	return workshopError(err)
}
