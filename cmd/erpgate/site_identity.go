package main

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// syncSiteIdentities gives every site the identity key its connector
// computes from its settings. The admin API writes the key with every
// change of the settings and migration 00014 filled it in for sites
// registered before it, with the rules of that time; this catches a site
// whose connector's rules changed since. A key another site already holds
// is not written: the operator is told which sites collide. Replicas
// starting together write the same keys, so the race is harmless.
func syncSiteIdentities(ctx context.Context, store *sites.Store, reg *connector.Registry, log *zap.Logger) error {
	list, err := store.ListSites(ctx)
	if err != nil {
		return fmt.Errorf("check site identities: %w", err)
	}
	for _, site := range list {
		conn, ok := reg.Get(site.Kind)
		if !ok {
			continue
		}
		key := conn.SiteRules().IdentityOf(site.Settings)
		if key == site.IdentityKey {
			continue
		}
		if _, err := store.UpdateSite(ctx, site.ID, sites.SiteUpdate{IdentityKey: &key}); err != nil {
			log.Error("site identity not updated: another site has the same base URL and identity; change one of them",
				zap.String("site", site.Slug), zap.String("base_url", site.BaseURL), zap.Error(err))
			continue
		}
		log.Info("site identity updated from its connector's rules", zap.String("site", site.Slug))
	}
	return nil
}
