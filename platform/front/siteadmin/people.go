package siteadmin

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// ListPeople returns who has connected to the site: each ERP user with the
// MCP clients they use and when they first and last used them.
func (s *Service) ListPeople(ctx context.Context, site sites.Site) ([]sites.Person, error) {
	list, err := s.deps.Store.ListPeople(ctx, site.ID)
	if err != nil {
		return nil, internal(err)
	}
	return list, nil
}

// maxERPUserBytes bounds the ERP user a revocation names; ERP user ids
// (e-mail addresses, Acumatica logins) are far shorter.
const maxERPUserBytes = 320

// RevokePerson ends one person's access to the site through erpgate: their
// OAuth tokens (their MCP clients' next request gets 401), consents and
// stored ERP tokens. They can sign in again if the ERP still lets them.
func (s *Service) RevokePerson(ctx context.Context, actor Actor, site sites.Site, erpUser string) error {
	var err error
	switch {
	case strings.TrimSpace(erpUser) == "":
		err = invalid("name the ERP user whose grants to revoke")
	case len(erpUser) > maxERPUserBytes:
		err = invalid("the ERP user is longer than %d bytes", maxERPUserBytes)
	case !utf8.ValidString(erpUser) || strings.ContainsRune(erpUser, 0):
		// No ERP user holds these; Postgres could not even look one up.
		err = invalid("the ERP user must be text without NUL characters")
	default:
		err = s.deps.Store.RevokePerson(ctx, site.ID, erpUser)
		switch {
		case errors.Is(err, sites.ErrNotFound):
			e := newError(NotFound, err, "ERP user %s has not connected to site %s", toolerr.Quote(erpUser), toolerr.Quote(site.Slug))
			e.ForPeople = toolerr.Quote(erpUser) + " has no access through erpgate to revoke: it was revoked already, or they never connected"
			err = e
		case err != nil:
			err = internal(err)
		}
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionRevokePerson, map[string]any{"erp_user": erpUser}, err)
	return err
}
