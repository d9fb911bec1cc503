package main

import (
	"context"
	"fmt"
	"os"

	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/database"
)

func runMigrate(ctx context.Context, configPath, direction string) error {
	switch direction {
	case "up", "down", "status":
	default:
		return usageError{fmt.Sprintf("migrate: unknown direction %q (use up, down or status)", direction)}
	}
	cfg, err := config.LoadDatabaseOnly(os.LookupEnv, configPath)
	if err != nil {
		return err
	}
	return database.Migrate(ctx, cfg.DatabaseURL.Reveal(), direction, os.Stdout)
}
