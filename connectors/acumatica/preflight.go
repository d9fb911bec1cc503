package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
)

var _ connector.Preflighter = (*Connector)(nil)

// Preflight checks the identity server's endpoints, that the OAuth client
// accepts erpgate's redirect URI, that the site's endpoint version exists,
// and that the canary inquiry is exposed over OData and readable.
func (c *Connector) Preflight(ctx context.Context, site connector.Site, in connector.PreflightInput) []connector.PreflightCheck {
	set := siteSettings(site)
	// The inquiry the gate reads: the site's own, or the deployment's.
	set.CanaryGI = c.gateSettingsOf(site).CanaryGI
	return []connector.PreflightCheck{
		checkIdentityServer(ctx, site, in.HTTP),
		c.checkRedirectURI(ctx, site, in),
		c.checkSharedRedirectURI(ctx, site, in),
		checkEndpoint(ctx, site, set, in),
		checkCanaryExposed(ctx, site, set, in.API),
		c.checkCanaryReadable(ctx, site, set, in.API),
	}
}

const noAnswer = "check that the instance runs; then run the preflight again"

func checkIdentityServer(ctx context.Context, site connector.Site, hc *http.Client) connector.PreflightCheck {
	const id, title = "acumatica.oauth_endpoints", "The identity server's endpoints answer"
	status, doc, err := connector.ReadOAuthDiscovery(ctx, hc, site.URL(identityDiscoveryPath, nil))
	if err != nil {
		return connector.Fail(id, title, "the instance did not answer", noAnswer)
	}
	if !doc.Named() {
		return connector.Fail(id, title, fmt.Sprintf("%s answered HTTP %d without the authorize and token endpoints", identityDiscoveryPath, status),
			"check that the base URL is the instance URL, with its virtual directory (https://host/AcumaticaERP) when it has one")
	}
	found := "the discovery document names " + doc.Authorization + " and " + doc.Token
	if !slices.Contains(doc.PKCE, "S256") {
		return connector.Fail(id, title, found+", but not PKCE S256", "upgrade the instance: erpgate signs people in with PKCE S256")
	}
	return connector.Pass(id, title, found)
}

// checkRedirectURI sends an authorization request with erpgate's redirect
// URI and reads, without following anything, what the identity server
// does: its sign-in page means the client and the redirect URI are
// accepted; its error page, or a redirect carrying an error, that they
// are not.
func (c *Connector) checkRedirectURI(ctx context.Context, site connector.Site, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "acumatica.redirect_uri", "The OAuth client accepts erpgate's redirect URI"
	switch {
	case in.OAuthClient == nil:
		return connector.Skip(id, title, "the site has no OAuth client")
	case in.RedirectURI == "":
		return connector.Skip(id, title, "not checked: erpgate's public base URL is not known here")
	}
	resp, body, err := connector.PreflightAuthorize(ctx, c, site, in.HTTP, *in.OAuthClient, in.RedirectURI)
	if err != nil {
		return connector.Fail(id, title, "the instance did not answer", noAnswer)
	}
	fix := fmt.Sprintf("on Connected Applications (SM303010), open the client %s: its flow must be Authorization Code and its Redirect URIs must include %s exactly",
		in.OAuthClient.ID, in.RedirectURI)
	location := resp.Header.Get("Location")
	switch {
	case resp.StatusCode == http.StatusOK:
		return connector.Pass(id, title, "the identity server showed its sign-in page for "+in.RedirectURI)
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && strings.HasPrefix(location, in.RedirectURI):
		// The client and the redirect URI were accepted; the request was
		// refused back to erpgate.
		code := "an error"
		if u, err := url.Parse(location); err == nil && u.Query().Get("error") != "" {
			code = connector.ERPWord(u.Query().Get("error"))
		}
		return connector.Fail(id, title, "the identity server accepted the redirect URI but refused the request with "+code, fix)
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && !strings.Contains(strings.ToLower(location), "error"):
		return connector.Pass(id, title, "the identity server sent the browser on to sign in for "+in.RedirectURI)
	}
	text := strings.ToLower(string(body))
	switch {
	case strings.Contains(text, "redirect_uri"):
		return connector.Fail(id, title, "the client "+in.OAuthClient.ID+" does not accept "+in.RedirectURI, fix)
	case strings.Contains(text, "unauthorized_client") || strings.Contains(text, "unknown client"):
		return connector.Fail(id, title, "the identity server does not know the client "+in.OAuthClient.ID+", or it is not active",
			"create (or activate) a Connected Application (SM303010) with the Authorization Code flow and the redirect URI "+in.RedirectURI+", and put its client id (id@Tenant) and secret on the site")
	}
	return connector.Fail(id, title, fmt.Sprintf("the identity server answered the authorization request with HTTP %d", resp.StatusCode), fix)
}

// checkSharedRedirectURI asks, as checkRedirectURI does, whether the
// client of a site with its own redirect URI still accepts the shared one:
// while it does, the owner of a site still on the shared URI can have this
// instance's codes for the site's people sent there.
func (c *Connector) checkSharedRedirectURI(ctx context.Context, site connector.Site, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "acumatica.shared_redirect_uri", "The OAuth client no longer accepts the shared redirect URI"
	switch {
	case in.SharedRedirectURI == "":
		return connector.Skip(id, title, "the site is still on the shared redirect URI")
	case in.OAuthClient == nil:
		return connector.Skip(id, title, "the site has no OAuth client")
	}
	resp, body, err := connector.PreflightAuthorize(ctx, c, site, in.HTTP, *in.OAuthClient, in.SharedRedirectURI)
	if err != nil {
		return connector.Fail(id, title, "the instance did not answer", noAnswer)
	}
	location := resp.Header.Get("Location")
	switch {
	case resp.StatusCode == http.StatusOK,
		resp.StatusCode >= 300 && resp.StatusCode < 400 && (strings.HasPrefix(location, in.SharedRedirectURI) || !strings.Contains(strings.ToLower(location), "error")):
		return connector.Fail(id, title, "the client "+in.OAuthClient.ID+" still accepts "+in.SharedRedirectURI,
			fmt.Sprintf("on Connected Applications (SM303010), open the client %s and remove %s from its Redirect URIs: while it is there, another site still on that address can be sent the sign-ins of this site's people",
				in.OAuthClient.ID, in.SharedRedirectURI))
	case strings.Contains(strings.ToLower(string(body)), "redirect_uri"):
		return connector.Pass(id, title, "the client "+in.OAuthClient.ID+" does not accept "+in.SharedRedirectURI)
	}
	return connector.Skip(id, title, "not checked: the identity server refused the client (see the redirect URI check)")
}

// checkEndpoint reads the instance's endpoint list (GET /entity) and
// looks for the site's endpoint and version.
func checkEndpoint(ctx context.Context, site connector.Site, set Settings, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "acumatica.endpoint_version", "The site's endpoint version exists"
	hc := in.API
	if hc == nil {
		hc = in.HTTP
	}
	resp, body, err := connector.PreflightGet(ctx, hc, site.URL("/entity", nil))
	if err != nil {
		return connector.Fail(id, title, "the instance did not answer", noAnswer)
	}
	root, ok := parseEndpointList(body)
	if resp.StatusCode != http.StatusOK || !ok {
		return connector.Fail(id, title, fmt.Sprintf("/entity answered HTTP %d without a list of endpoints", resp.StatusCode),
			"check that the base URL is the instance URL, with its virtual directory when it has one")
	}
	build := "Acumatica"
	if root.build != "" {
		build += " " + connector.ERPWord(root.build)
	}
	var have []string
	for _, e := range root.rows {
		ep := connector.ERPWord(e.Name) + "/" + connector.ERPWord(e.Version)
		if strings.EqualFold(e.Name, set.EndpointName) && e.Version == set.EndpointVersion {
			return connector.Pass(id, title, fmt.Sprintf("%s has the endpoint %s", build, ep))
		}
		have = append(have, ep)
	}
	return connector.Fail(id, title,
		fmt.Sprintf("%s has no endpoint %s; it has %s", build, set.endpoint(), strings.Join(have, ", ")),
		fmt.Sprintf("set the site's endpoint_version to one the instance has (erpgate reads %s at %s or %s)", DefaultEndpointName, DefaultEndpointVersion, endpointVersion25))
}

// checkCanaryExposed looks for the canary inquiry in the GI OData service
// document, which lists every inquiry exposed via OData whoever asks.
func checkCanaryExposed(ctx context.Context, site connector.Site, set Settings, api *http.Client) connector.PreflightCheck {
	const id, title = "acumatica.canary_exposed", "The canary inquiry is exposed over OData"
	switch {
	case set.Tenant == "":
		return connector.Fail(id, title, "the site has no tenant setting, so the OData address is unknown",
			"set the site's tenant setting to the tenant's login name (Tenants, SM203520)")
	case api == nil:
		return connector.Skip(id, title, "not checked: the OData service needs a working API credential")
	}
	resp, body, err := connector.PreflightGet(ctx, api, site.URL("/t/"+url.PathEscape(set.Tenant)+"/api/odata/gi", nil))
	if err != nil {
		return connector.Fail(id, title, "the instance did not answer", noAnswer)
	}
	var doc struct {
		Value []struct {
			Name string `json:"name"`
		} `json:"value"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil {
		return connector.Fail(id, title, fmt.Sprintf("the OData service of tenant %s answered HTTP %d", set.Tenant, resp.StatusCode),
			"check the site's tenant setting: it must be the tenant's login name (Tenants, SM203520)")
	}
	for _, q := range doc.Value {
		if strings.EqualFold(q.Name, set.CanaryGI) {
			return connector.Pass(id, title, fmt.Sprintf("the inquiry %s is among the %d inquiries tenant %s exposes", set.CanaryGI, len(doc.Value), set.Tenant))
		}
	}
	return connector.Fail(id, title, fmt.Sprintf("tenant %s exposes %d inquiries over OData, and %s is not one of them", set.Tenant, len(doc.Value), set.CanaryGI),
		fmt.Sprintf("on Generic Inquiry (SM208000), create or open the inquiry %s, tick Expose via OData and publish it; or set the site's canary_gi to the inquiry you use", set.CanaryGI))
}

// checkCanaryReadable reads the canary as the API user, as the access gate
// reads it as each person.
func (c *Connector) checkCanaryReadable(ctx context.Context, site connector.Site, set Settings, api *http.Client) connector.PreflightCheck {
	const id, title = "acumatica.canary_readable", "The canary inquiry is readable"
	if api == nil {
		return connector.Skip(id, title, "not checked: reading the inquiry needs a working API credential")
	}
	check, err := c.CheckAccess(ctx, site, api)
	if err != nil {
		return connector.Fail(id, title, "the inquiry "+set.CanaryGI+" could not be read", noAnswer)
	}
	switch check.Decision {
	case connector.AccessAllowed:
		return connector.Pass(id, title, check.Detail+" by the API user; people who may read it may use erpgate")
	case connector.AccessDenied:
		return connector.Fail(id, title, check.Detail+" to the API user",
			"give the API user's role View rights on the inquiry "+set.CanaryGI+" (User Roles, SM201005): whoever may read it may use erpgate")
	}
	return connector.Fail(id, title, check.Detail, "check: "+strings.Join(check.LikelyCauses, "; "))
}
