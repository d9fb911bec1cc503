package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

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
		// What is under way or kept for a session, and no configured key
		// opens, is left as it is and counted; the command then fails,
		// saying so, after doing all the rest.
		var left []string
		leftOf := func(n int, one, many string) {
			switch {
			case n == 1:
				left = append(left, "1 "+one)
			case n > 1:
				left = append(left, fmt.Sprintf("%d %s", n, many))
			}
		}
		// Sign-ins from MCP clients under way.
		f, fl, err := auth.RotateFlowKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		leftOf(fl, "sign-in from an MCP client under way", "sign-ins from MCP clients under way")
		// Service connections' ERP tokens: one no key opens is deleted, and
		// its connection signs in afresh on its next call.
		o, err := erptokens.New(pool, cfg.Keyring, erptokens.Options{}).RotateKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		// Owners' and open registrations' ERP tokens, kept for their
		// sessions.
		p, pl, err := pagesession.NewTokens(pool, cfg.Keyring).RotateKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		leftOf(pl, "ERP token kept for an owner's or a registration's session", "ERP tokens kept for owners' or registrations' sessions")
		// Owners' changes waiting for their proof at the ERP.
		c, cl, err := sites.NewStore(pool, cfg.Keyring).RotateOwnerChangeKeys(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		leftOf(cl, "owner's change waiting for its proof", "owners' changes waiting for their proof")
		// Sign-ins at an ERP proving an administrator, and registrations,
		// in progress: minutes long, but under way when the old key goes
		// right after this.
		a, al, err := erpadmin.RotateKeys(ctx, pool, cfg.Keyring)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		leftOf(al, "sign-in at an ERP proving an administrator", "sign-ins at an ERP proving an administrator")
		r, rl, err := register.RotateKeys(ctx, pool, cfg.Keyring)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		leftOf(rl, "registration under way", "registrations under way")
		fmt.Printf("re-encrypted %d secrets under key %q\n", n+m+f+o+p+c+a+r, cfg.Keyring.PrimaryKeyID())
		if len(left) > 0 {
			msg := fmt.Sprintf("keys rotate: left as they were, as no configured key opens them (sealed under a key not in ERPGATE_ENCRYPTION_KEYS): %s; "+
				"they work again once that key is put back and keys rotate is run again", strings.Join(left, ", "))
			if unreadable != nil {
				return fmt.Errorf("%s; and %w", msg, unreadable)
			}
			return errors.New(msg)
		}
		if unreadable != nil {
			return fmt.Errorf("keys rotate: %w", unreadable)
		}
		return nil
	}
	return usageError{fmt.Sprintf("keys: unknown subcommand %q", args[0])}
}
