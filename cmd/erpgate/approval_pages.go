package main

import (
	"fmt"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/approve"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// approvalSessionKeyInfo names the one use of the key that signs approval
// sessions (see ownerSessionKeyInfo): a key of its own, so that an owner
// session can never pass for an approval session or the other way round.
const approvalSessionKeyInfo = "approval session signing"

// mountApprovalPages serves the approval page, /approve/{id}.
func mountApprovalPages(e *echo.Echo, cfg *config.Config, actions *approval.Store, admin *siteadmin.Service, store *sites.Store,
	reg *connector.Registry, proofs *erpadmin.Service, usage approve.UsageRecorder, ends *pagesession.Store, lookups *sourcelimit.Lookups, log *zap.Logger) error {
	kit, err := pagekit.New(cfg.PublicURL(""))
	if err != nil {
		return fmt.Errorf("approval pages: %w", err)
	}
	approve.New(approve.Deps{
		Kit: kit, Actions: actions, Sites: store, Admin: admin, Registry: reg, Proofs: proofs, Usage: usage,
		Signer: pagekit.NewSigner(cfg.Keyring.DeriveKey(approvalSessionKeyInfo)), Ends: ends, Logger: log, ClientIP: e.IPExtractor, Lookups: lookups,
		LinkKeys: cfg.Keyring.DeriveKeys(approval.LinkKeyPurpose),
	}).Register(e)
	return nil
}
