package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	authstorage "github.com/erpgate/erpgate/authserver/storage"

	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/erptokens"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/register"
)

func runKeys(ctx context.Context, configPath string, args []string) error {
	if len(args) == 0 {
		return usageError{"keys needs rotate or generate"}
	}
	switch args[0] {
	case "generate":
		id := "k1"
		if len(args) > 1 {
			id = args[1]
		}
		spec, err := secrets.GenerateKeySpec(id)
		if err != nil {
			return err
		}
		fmt.Println(spec)
		return nil
	case "rotate":
		cfg, err := config.LoadRequiring(os.LookupEnv, configPath, config.RequireDatabaseURL|config.RequireEncryptionKeys)
		if err != nil {
			return err
		}
		pool, err := database.Open(ctx, cfg.DatabaseURL.Reveal())
		if err != nil {
			return err
		}
		defer pool.Close()
		n, err := sites.NewStore(pool, cfg.Keyring).RotateKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		// Users' ERP tokens that cannot be opened are left behind; the rest
		// is still re-encrypted, and the command then reports them.
		auth := authstorage.New(pool, cfg.Keyring, authstorage.Options{})
		m, unreadable := auth.RotateKeys(ctx)
		if unreadable != nil && !errors.Is(unreadable, authstorage.ErrUnreadableTokens) {
			return fmt.Errorf("keys rotate: %w", unreadable)
		}
		// Sign-ins from MCP clients under way; one no key opens is ended.
		f, err := auth.RotateFlowKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		o, err := erptokens.New(pool, cfg.Keyring, erptokens.Options{}).RotateKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		// Owners' and open registrations' ERP tokens, kept for their
		// sessions: one no key opens is dropped, as reading it would.
		p, err := pagesession.NewTokens(pool, cfg.Keyring).RotateKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		// Owners' changes waiting for their proof at the ERP; one no key
		// opens could never be applied and is dropped.
		c, err := sites.NewStore(pool, cfg.Keyring).RotateOwnerChangeKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		// Sign-ins at an ERP proving an administrator, and registrations,
		// in progress: minutes long, but under way when the old key goes
		// right after this. One no key opens could never finish and is
		// dropped.
		a, err := erpadmin.RotateKeys(ctx, pool, cfg.Keyring)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		r, err := register.RotateKeys(ctx, pool, cfg.Keyring)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		fmt.Printf("re-encrypted %d secrets under key %q\n", n+m+f+o+p+c+a+r, cfg.Keyring.PrimaryKeyID())
		if unreadable != nil {
			return fmt.Errorf("keys rotate: %w", unreadable)
		}
		return nil
	}
	return usageError{fmt.Sprintf("keys: unknown subcommand %q", args[0])}
}
