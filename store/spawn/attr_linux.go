package spawn

import "syscall"

// childAttr makes a spawned server die with locklab (the kernel sends it
// SIGKILL when locklab's spawning thread ends, even by kill -9) and keeps
// it out of the terminal's process group, so Ctrl-C reaches locklab alone,
// which then stops it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
