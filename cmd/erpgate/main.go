// Command erpgate is the gateway: it serves MCP for many ERP sites, the
// admin API and erpgate's pages, and carries the operator commands.
//
//	erpgate [serve]                 run the gateway (migrates first)
//	erpgate migrate up|down|status  run migrations by hand
//	erpgate keys rotate             re-encrypt stored secrets under the first key
//	erpgate keys generate [id]      print a new ERPGATE_ENCRYPTION_KEYS entry
//	erpgate dev                     run everything locally (built with -tags dev; see cmd/erpgate-dev)
//	erpgate healthcheck             exit 0 when this machine's gateway answers /healthz
//	erpgate version
//
// Configuration comes from the environment and an optional YAML file
// (ERPGATE_CONFIG or --config); configs/erpgate.example.yaml lists every key.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		var usage usageError
		if errors.As(err, &usage) {
			fmt.Fprintln(os.Stderr, err)
			fmt.Fprintln(os.Stderr, usageText)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "erpgate:", err)
		os.Exit(1)
	}
}

const usageText = `usage:
  erpgate [--config FILE] [serve]
  erpgate [--config FILE] migrate up|down|status
  erpgate [--config FILE] keys rotate
  erpgate keys generate [KEY_ID]
  erpgate dev                 (built with -tags dev; from the source tree: go run ./cmd/erpgate-dev)
  erpgate [--config FILE] healthcheck
  erpgate version`

// devCommand is `erpgate dev`. The release binary has no simulators;
// dev.go, built with -tags dev, replaces this.
var devCommand = func(context.Context, []string) error {
	return usageError{"this erpgate binary is a release build without the ERP simulators; run dev from the source tree with: go run ./cmd/erpgate-dev"}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, argv []string) error {
	fs := flag.NewFlagSet("erpgate", flag.ContinueOnError)
	configPath := fs.String("config", os.Getenv("ERPGATE_CONFIG"), "YAML configuration file")
	if err := fs.Parse(argv); err != nil {
		return usageError{err.Error()}
	}
	args := fs.Args()
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		if len(args) != 0 {
			return usageError{"serve takes no arguments"}
		}
		return runServe(ctx, *configPath)
	case "migrate":
		if len(args) != 1 {
			return usageError{"migrate needs one of up, down, status"}
		}
		return runMigrate(ctx, *configPath, args[0])
	case "keys":
		return runKeys(ctx, *configPath, args)
	case "dev":
		return devCommand(ctx, args)
	case "healthcheck":
		return runHealthcheck(ctx, *configPath, args)
	case "version":
		fmt.Println("erpgate", version)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}
