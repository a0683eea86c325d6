//go:build !linux

package spawn

import "syscall"

// childAttr keeps a spawned server out of the terminal's process group;
// without Linux's parent-death signal, locklab clean stops what a killed
// locklab left.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
