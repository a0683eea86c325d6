package spawn

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SpawnedLeft is a topology directory whose locklab process is gone, and the
// server processes still working in it.
type SpawnedLeft struct {
	Dir   string
	Owner int   // the locklab process that made it
	PIDs  []int // redis-server/redis-sentinel processes working in Dir
}

// FindLeftovers lists the topologies a dead locklab left: a directory in
// the temp dir named like one, holding locklab's owner file, whose owner
// process no longer runs locklab; and the server processes of this user
// whose working directory is inside it. A directory without the owner
// file, or whose owner lives, is not listed.
func FindLeftovers() ([]SpawnedLeft, error) {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), topoDirPrefix+"*"))
	if err != nil {
		return nil, err
	}
	var out []SpawnedLeft
	for _, d := range dirs {
		owner, ok := ownerOf(d)
		if !ok || locklabRuns(owner) {
			continue
		}
		out = append(out, SpawnedLeft{Dir: d, Owner: owner, PIDs: serversIn(d)})
	}
	return out, nil
}

// ownerOf reads a topology directory's owner file: "locklab PID".
func ownerOf(dir string) (int, bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !mine(fi) {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil || len(b) > 64 {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "locklab" {
		return 0, false
	}
	pid, err := strconv.Atoi(f[1])
	return pid, err == nil && pid > 0
}

// mine reports whether this user owns the file.
func mine(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// locklabRuns reports whether process pid is alive and a locklab (a pid
// reused by another program does not keep a topology alive, nor a zombie;
// one whose program cannot be read is taken as alive).
func locklabRuns(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if _, rest, ok := strings.Cut(string(st), ") "); ok && strings.HasPrefix(rest, "Z") {
			return false // killed, not yet reaped by its parent
		}
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return true
	}
	return strings.Contains(filepath.Base(exe), "locklab") || strings.HasSuffix(exe, ".test")
}

// serversIn are the redis-server or redis-sentinel processes whose
// working directory is inside dir.
func serversIn(dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			continue
		}
		exe, _ := os.Readlink(filepath.Join(p, "exe"))
		switch filepath.Base(strings.TrimSuffix(exe, " (deleted)")) {
		case "redis-server", "redis-sentinel", "redis-check-rdb", "redis-check-aof":
			out = append(out, pid)
		}
	}
	return out
}

// Remove kills the leftover's servers and removes its directory.
func (l SpawnedLeft) Remove() error {
	for _, pid := range l.PIDs {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("stop pid %d: %w", pid, err)
		}
	}
	return os.RemoveAll(l.Dir)
}
