package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// helperProc is a helper process: this same program started with a
// subcommand (the simulator, the proxy). It announces itself with one JSON
// line on standard output and exits when its standard input closes, which
// happens when the benchmark exits, however it exits.
type helperProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
}

// startHelper runs this program with args and decodes its first output
// line into hello.
func startHelper(ctx context.Context, hello any, args ...string) (*helperProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &helperProc{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	lines := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, hello)
		}
		lines <- err
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case err = <-lines:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// pid is the helper's process id.
func (p *helperProc) pid() int { return p.cmd.Process.Pid }

// stop closes the helper's standard input and waits for it to exit.
func (p *helperProc) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitForParent blocks a helper until its standard input closes or it is
// told to stop.
func waitForParent() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	gone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(gone) }()
	select {
	case <-stop:
	case <-gone:
	}
}
