package authserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// errNoSignIn means a site exists but users cannot sign in to it: it is
// disabled, its connector has no OAuth sign-in, or it has no OAuth client.
var errNoSignIn = errors.New("authserver: this site does not offer sign-in")

// signInSite is everything the sign-in needs about one site.
type signInSite struct {
	site   sites.Site
	csite  connector.Site
	oauth  connector.UpstreamOAuth
	client connector.OAuthClient
}

// gate returns the connector's access gate, if it has one.
func (s signInSite) gate() (connector.UpstreamAccessGate, bool) {
	g, ok := s.oauth.(connector.UpstreamAccessGate)
	return g, ok
}

// loadSignInSite loads a site by id for sign-in and for tool calls. It
// reports sites.ErrNotFound and errNoSignIn.
func (s *Server) loadSignInSite(ctx context.Context, id uuid.UUID) (signInSite, error) {
	site, err := s.deps.Sites.GetSite(ctx, id)
	if err != nil {
		return signInSite{}, err
	}
	return s.signInSiteOf(ctx, site)
}

// loadSignInSiteBySlug is loadSignInSite by slug.
func (s *Server) loadSignInSiteBySlug(ctx context.Context, slug string) (signInSite, error) {
	site, err := s.deps.Sites.GetSiteBySlug(ctx, slug)
	if err != nil {
		return signInSite{}, err
	}
	return s.signInSiteOf(ctx, site)
}

func (s *Server) signInSiteOf(ctx context.Context, site sites.Site) (signInSite, error) {
	if site.Status != sites.StatusActive {
		return signInSite{}, fmt.Errorf("site %s is disabled: %w", site.Slug, errNoSignIn)
	}
	conn, ok := s.deps.Registry.Get(site.Kind)
	if !ok {
		return signInSite{}, fmt.Errorf("site %s: no connector for kind %s: %w", site.Slug, site.Kind, errNoSignIn)
	}
	oauth, ok := conn.(connector.UpstreamOAuth)
	if !ok {
		return signInSite{}, fmt.Errorf("site %s: the %s connector has no OAuth sign-in: %w", site.Slug, site.Kind, errNoSignIn)
	}
	csite, err := site.Connector()
	if err != nil {
		return signInSite{}, err
	}
	_, fields, err := s.deps.Sites.GetConnection(ctx, site.ID, sites.ConnectionOAuth)
	if errors.Is(err, sites.ErrNotFound) {
		return signInSite{}, fmt.Errorf("site %s has no OAuth connection: %w", site.Slug, errNoSignIn)
	}
	if err != nil {
		return signInSite{}, err
	}
	return signInSite{
		site:   site,
		csite:  csite,
		oauth:  oauth,
		client: connector.OAuthClient{ID: fields["client_id"].Reveal(), Secret: fields["client_secret"]},
	}, nil
}
