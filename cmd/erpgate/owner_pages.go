package main

import (
	"fmt"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/manage"
	"github.com/erpgate/erpgate/web/pagekit"
)

// ownerSessionKeyInfo names the one use of the key that signs owner
// sessions: HKDF-SHA256 from the primary encryption key
// (secrets.Keyring.DeriveKey), so every replica derives the same key and
// the key encrypts nothing. Rotating the primary key signs everyone out.
const ownerSessionKeyInfo = "owner session signing"

// mountOwnerPages serves the site owner's page, /sites/{slug}/manage.
func mountOwnerPages(e *echo.Echo, cfg *config.Config, admin *siteadmin.Service, store *sites.Store, reg *connector.Registry, proofs *erpadmin.Service, live *livesettings.Store, ends *pagesession.Store, tokens *pagesession.Tokens, lookups *sourcelimit.Lookups, log *zap.Logger) error {
	kit, err := pagekit.New(cfg.PublicURL(""))
	if err != nil {
		return fmt.Errorf("owner pages: %w", err)
	}
	manage.New(manage.Deps{
		Kit: kit, Admin: admin, Store: store, Registry: reg, Proofs: proofs, Settings: live,
		Signer: pagekit.NewSigner(cfg.Keyring.DeriveKey(ownerSessionKeyInfo)), Ends: ends, Tokens: tokens, Logger: log, ClientIP: e.IPExtractor, Lookups: lookups,
	}).Register(e)
	return nil
}
