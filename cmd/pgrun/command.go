package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// exitNotRunnable is the shell's code for a command that cannot be run.
const exitNotRunnable = 127

// forwarder routes SIGINT and SIGTERM: while the cluster starts they cancel
// the start; while the command runs they are passed on to it, and pgrun
// itself keeps going so it can clean up after the command exits.
type forwarder struct {
	mu     sync.Mutex
	cancel func()
	proc   *os.Process
}

func newForwarder(signals <-chan os.Signal) *forwarder {
	f := &forwarder{}
	go func() {
		for sig := range signals {
			f.mu.Lock()
			switch {
			case f.proc != nil:
				_ = f.proc.Signal(sig)
			case f.cancel != nil:
				f.cancel()
			}
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *forwarder) setCancel(cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancel = cancel
}

func (f *forwarder) setProcess(p *os.Process) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proc = p
}

// running reports whether a command is running (signals go to it).
func (f *forwarder) running() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.proc != nil
}

// runCommand runs args with env, streaming its standard streams, and returns
// its exit code (128+n when signal n killed it, as shells report it).
func runCommand(args, env []string, fwd *forwarder) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		return exitNotRunnable
	}
	fwd.setProcess(cmd.Process)
	err := cmd.Wait()
	fwd.setProcess(nil)
	if err == nil {
		return 0
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		return exitNotRunnable
	}
	if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return exitErr.ExitCode()
}
