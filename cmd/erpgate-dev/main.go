// Command erpgate-dev runs erpgate locally from the source tree:
//
//	go run ./cmd/erpgate-dev
//
// It builds erpgate with the ERP simulators (go build -tags dev) into
// .data/bin, saying what the build is doing, and then becomes `erpgate dev`:
// a private Postgres under .data/, the Frappe and Acumatica simulators with
// demo data, the gateway and two demo sites. The release binary
// (go build ./cmd/erpgate) has no simulators and no dev command.
//
// It imports only the standard library, so `go run` compiles it in a moment
// and downloads nothing for it.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	erpgatePackage = "github.com/erpgate/erpgate/cmd/erpgate"
	binaryPath     = ".data/bin/erpgate-dev"
	progressEvery  = 5 * time.Second
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "erpgate-dev:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	takeTerminal()
	bin, err := filepath.Abs(binaryPath)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(bin), err)
	}
	// Ctrl-C while building: go build stops too; end quietly.
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	err = build(bin)
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	select {
	case <-interrupted:
		os.Exit(0)
	default:
	}
	if err != nil {
		return err
	}
	// Become erpgate dev, so Ctrl-C reaches it directly and its exit
	// status is ours.
	argv := append([]string{bin, "dev"}, args...)
	if err := syscall.Exec(bin, argv, os.Environ()); err == nil {
		return nil
	}
	// Exec is not available everywhere (Windows): run it as a child.
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		return err
	}
	return nil
}

// build runs go build -v -tags dev (unoptimised) and turns its package lines into a
// progress line every few seconds; anything else it prints (compile
// errors) passes through.
func build(bin string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	fmt.Fprintln(os.Stderr, "erpgate-dev: building erpgate with the ERP simulators (go build -tags dev "+erpgatePackage+").")
	fmt.Fprintln(os.Stderr, "erpgate-dev: a first build downloads and compiles its modules, about a minute on 2 cores; later ones take seconds.")
	start := time.Now()
	// Without the compiler's optimisations and inlining (-N -l), a first
	// build from empty caches compiles its ~520 packages in about 41 s
	// instead of 58 s on 2 cores. A local dev gateway does not need the
	// optimised code; the release binary and the benchmarks are built
	// without these flags. The standard library keeps the usual flags
	// (the later -gcflags pattern wins), so the packages `go run` has just
	// compiled for this command are not compiled again.
	cmd := exec.Command(goBin, "build", "-v", "-tags", "dev", "-gcflags=all=-N -l", "-gcflags=std=", "-o", bin, erpgatePackage)
	cmd.Stdout = os.Stderr
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", goBin, err)
	}
	var p progress
	scanned := make(chan struct{})
	go func() {
		p.scan(pipe, os.Stderr)
		close(scanned)
	}()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-scanned:
			waiting = false
		case <-tick.C:
			modules, packages := p.counts()
			fmt.Fprintf(os.Stderr, "erpgate-dev: still building (%.0f s): %d modules downloaded, %d packages compiled\n",
				time.Since(start).Seconds(), modules, packages)
		}
	}
	if err := cmd.Wait(); err != nil {
		return errors.New("building erpgate failed; go build's messages are above")
	}
	modules, packages := p.counts()
	if packages > 0 {
		fmt.Fprintf(os.Stderr, "erpgate-dev: built in %.0f s (%d modules downloaded, %d packages compiled); starting erpgate dev\n",
			time.Since(start).Seconds(), modules, packages)
	}
	return nil
}

// progress counts what go build -v reports.
type progress struct {
	mu       sync.Mutex
	modules  int
	packages int
}

func (p *progress) scan(r io.Reader, passThrough io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		switch {
		case strings.HasPrefix(line, "go: downloading "):
			p.modules++
		case line != "" && !strings.ContainsAny(line, " \t:"):
			p.packages++ // an import path: go build -v names each package it compiles
		default:
			p.mu.Unlock()
			fmt.Fprintln(passThrough, line)
			continue
		}
		p.mu.Unlock()
	}
}

func (p *progress) counts() (modules, packages int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modules, p.packages
}
