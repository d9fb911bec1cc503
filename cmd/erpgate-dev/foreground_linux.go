package main

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// takeTerminal moves this process into a process group of its own and
// makes that group the terminal's foreground group, so Ctrl-C reaches this
// process (and go build, and erpgate dev after the exec) but not the
// `go run` or `go tool task` that started it. Those would otherwise exit
// with status 1 after an interrupt however cleanly erpgate stopped (go run
// sets status 1 whenever it sees one). When they wait for us, they exit
// with our status; the shell takes the terminal back when its job ends.
// Without a terminal on stdin it does nothing.
func takeTerminal() {
	fd := os.Stdin.Fd()
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return // not a terminal
	}
	if int(pgrp) != syscall.Getpgrp() {
		return // we are not in the foreground: leave the terminal alone
	}
	if err := syscall.Setpgid(0, 0); err != nil {
		return
	}
	// A process outside the foreground group that sets it is sent SIGTTOU.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	self := int32(syscall.Getpid())
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&self)))
}
