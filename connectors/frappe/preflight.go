package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
)

var _ connector.Preflighter = (*Connector)(nil)

// minFrappeMajor is the oldest Frappe release erpgate is built against
// (shared/erp-api/frappe/api-facts.md was read from v15).
const minFrappeMajor = 15

// Preflight checks Frappe's version, its OAuth endpoints, that its OAuth
// client accepts erpgate's redirect URI, and the client's settings.
func (c *Connector) Preflight(ctx context.Context, site connector.Site, in connector.PreflightInput) []connector.PreflightCheck {
	return []connector.PreflightCheck{
		checkVersion(ctx, site, in.API),
		checkOAuthEndpoints(ctx, site, in.HTTP),
		checkRedirectURI(ctx, c, site, in),
		checkSharedRedirectURI(ctx, c, site, in),
		checkOAuthClient(ctx, site, in),
	}
}

func checkVersion(ctx context.Context, site connector.Site, api *http.Client) connector.PreflightCheck {
	const id, title = "frappe.version", "Frappe's version is one erpgate supports"
	if api == nil {
		return connector.Skip(id, title, "not checked: reading the version needs a working API credential")
	}
	resp, body, err := connector.PreflightGet(ctx, api, site.URL("/api/method/frappe.utils.change_log.get_versions", nil))
	if err != nil {
		return connector.Fail(id, title, "the ERP did not answer", "check that the ERP runs; then run the preflight again")
	}
	var out struct {
		Message map[string]struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"message"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.Message["frappe"].Version == "" {
		return connector.Fail(id, title, fmt.Sprintf("frappe.utils.change_log.get_versions answered HTTP %d without versions", resp.StatusCode),
			"check that the base URL is the Frappe site itself (not a proxy's page) and that the API user is enabled")
	}
	var apps []string
	for _, name := range slices.Sorted(maps.Keys(out.Message)) {
		apps = append(apps, name+" "+connector.ERPWord(out.Message[name].Version))
	}
	found := "installed: " + strings.Join(apps, ", ")
	frappe := out.Message["frappe"].Version
	major, err := strconv.Atoi(strings.SplitN(frappe, ".", 2)[0])
	if err != nil || major < minFrappeMajor {
		return connector.Fail(id, title, found, fmt.Sprintf("upgrade Frappe to version %d or later: erpgate reads Frappe's v%d API", minFrappeMajor, minFrappeMajor))
	}
	if _, ok := out.Message["erpnext"]; !ok {
		return connector.Fail(id, title, found, "install ERPNext on the site: erpgate's tools read ERPNext's documents and reports")
	}
	return connector.Pass(id, title, found)
}

func checkOAuthEndpoints(ctx context.Context, site connector.Site, hc *http.Client) connector.PreflightCheck {
	const id, title = "frappe.oauth_endpoints", "Frappe's OAuth provider answers"
	status, doc, err := connector.ReadOAuthDiscovery(ctx, hc, site.URL(oauthMethodPrefix+discoveryMethod, nil))
	if err != nil {
		return connector.Fail(id, title, "the ERP did not answer", "check that the ERP runs; then run the preflight again")
	}
	if !doc.Named() {
		return connector.Fail(id, title, fmt.Sprintf("%s answered HTTP %d without the authorize and token endpoints", discoveryMethod, status),
			"check that the base URL is the Frappe site itself; Frappe's OAuth provider (frappe.integrations.oauth2) is part of every Frappe v15 site")
	}
	return connector.Pass(id, title, "the discovery document names the authorize, token and userinfo endpoints")
}

// checkRedirectURI asks Frappe's authorize endpoint, as the API user (a
// Guest is sent to the login page before anything is validated), whether
// the OAuth client accepts erpgate's redirect URI: a valid request shows
// the Confirm Access page, or redirects to approve, which is not followed.
func checkRedirectURI(ctx context.Context, c *Connector, site connector.Site, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "frappe.redirect_uri", "The OAuth client accepts erpgate's redirect URI"
	switch {
	case in.OAuthClient == nil:
		return connector.Skip(id, title, "the site has no OAuth client")
	case in.API == nil:
		return connector.Skip(id, title, "not checked: Frappe validates the redirect URI only for a signed-in user, and the API credential does not work")
	case in.RedirectURI == "":
		return connector.Skip(id, title, "not checked: erpgate's public base URL is not known here")
	}
	resp, body, err := connector.PreflightAuthorize(ctx, c, site, in.API, *in.OAuthClient, in.RedirectURI)
	if err != nil {
		return connector.Fail(id, title, "the ERP did not answer", "check that the ERP runs; then run the preflight again")
	}
	fix := fmt.Sprintf("open OAuth Client %s in Frappe (/app/oauth-client/%s) and set Redirect URIs to include %s exactly, Grant Type to Authorization Code and Response Type to Code",
		in.OAuthClient.ID, url.PathEscape(in.OAuthClient.ID), in.RedirectURI)
	switch {
	case resp.StatusCode == http.StatusOK:
		return connector.Pass(id, title, "Frappe showed its Confirm Access page for "+in.RedirectURI)
	case resp.StatusCode == http.StatusFound && strings.Contains(resp.Header.Get("Location"), oauthMethodPrefix+"approve"):
		return connector.Pass(id, title, "Frappe accepted "+in.RedirectURI+" (the client skips the Confirm Access page)")
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	switch e.Error {
	case "invalid_client_id":
		// validate_client_id gives this answer both for a client that does
		// not exist and for one whose Allowed Roles the API user has none of.
		return connector.Fail(id, title, "Frappe refused OAuth Client "+in.OAuthClient.ID+" for the API user (invalid_client_id): the client does not exist, or the API user has none of its Allowed Roles",
			"open OAuth Client "+in.OAuthClient.ID+" in Frappe (/app/oauth-client/"+url.PathEscape(in.OAuthClient.ID)+"): if it exists, give its Allowed Roles a role the API user and the people who sign in have (Desk User, the default, admits every system user); if it does not, create an OAuth Client (/app/oauth-client/new) with Redirect URI "+in.RedirectURI+" and put its client id and secret on the site")
	case "mismatching_redirect_uri":
		return connector.Fail(id, title, "OAuth Client "+in.OAuthClient.ID+" does not list "+in.RedirectURI, fix)
	case "unauthorized_client", "unsupported_response_type":
		return connector.Fail(id, title, "OAuth Client "+in.OAuthClient.ID+" may not use the authorization code flow ("+e.Error+")", fix)
	}
	return connector.Fail(id, title, fmt.Sprintf("the authorize endpoint answered HTTP %d", resp.StatusCode), fix)
}

// checkSharedRedirectURI asks, as checkRedirectURI does, whether the OAuth
// client of a site with its own redirect URI still accepts the shared
// one. Frappe checks no client secret and names no issuer, so while it
// does, the owner of a site still on the shared URI can send this ERP's
// codes for the site's people to erpgate and redeem them.
func checkSharedRedirectURI(ctx context.Context, c *Connector, site connector.Site, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "frappe.shared_redirect_uri", "The OAuth client no longer accepts the shared redirect URI"
	switch {
	case in.SharedRedirectURI == "":
		return connector.Skip(id, title, "the site is still on the shared redirect URI")
	case in.OAuthClient == nil:
		return connector.Skip(id, title, "the site has no OAuth client")
	case in.API == nil:
		return connector.Skip(id, title, "not checked: Frappe validates the redirect URI only for a signed-in user, and the API credential does not work")
	}
	resp, body, err := connector.PreflightAuthorize(ctx, c, site, in.API, *in.OAuthClient, in.SharedRedirectURI)
	if err != nil {
		return connector.Fail(id, title, "the ERP did not answer", "check that the ERP runs; then run the preflight again")
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	switch {
	case resp.StatusCode == http.StatusOK,
		resp.StatusCode == http.StatusFound && strings.Contains(resp.Header.Get("Location"), oauthMethodPrefix+"approve"):
		return connector.Fail(id, title, "OAuth Client "+in.OAuthClient.ID+" still lists "+in.SharedRedirectURI,
			fmt.Sprintf("open OAuth Client %s in Frappe (/app/oauth-client/%s) and remove %s from Redirect URIs: while it is there, another site still on that address can take the sign-ins of this site's people",
				in.OAuthClient.ID, url.PathEscape(in.OAuthClient.ID), in.SharedRedirectURI))
	case e.Error == "mismatching_redirect_uri":
		return connector.Pass(id, title, "OAuth Client "+in.OAuthClient.ID+" does not list "+in.SharedRedirectURI)
	}
	return connector.Skip(id, title, "not checked: the OAuth client was refused (see the redirect URI check)")
}

// checkOAuthClient reads the OAuth Client document, which only a System
// Manager may: the API user usually may not (nor should it), and then the
// check says what to look at by hand.
func checkOAuthClient(ctx context.Context, site connector.Site, in connector.PreflightInput) connector.PreflightCheck {
	const id, title = "frappe.oauth_client", "The OAuth client's settings"
	switch {
	case in.OAuthClient == nil:
		return connector.Skip(id, title, "the site has no OAuth client")
	case in.API == nil:
		return connector.Skip(id, title, "not checked: reading the OAuth Client needs a working API credential")
	}
	manual := fmt.Sprintf("in Frappe, OAuth Client %s must have Redirect URIs including %s, Grant Type Authorization Code, Response Type Code and Scopes \"%s\"",
		in.OAuthClient.ID, in.RedirectURI, oauthScope)
	resp, body, err := connector.PreflightGet(ctx, in.API, site.URL("/api/resource/OAuth%20Client/"+url.PathEscape(in.OAuthClient.ID), nil))
	if err != nil {
		return connector.Fail(id, title, "the ERP did not answer", "check that the ERP runs; then run the preflight again")
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusForbidden:
		return connector.Skip(id, title, "not read: only a System Manager may read OAuth Clients, and the API user is none (as it should be); check by hand: "+manual)
	case http.StatusNotFound:
		return connector.Fail(id, title, "Frappe has no OAuth Client "+in.OAuthClient.ID,
			"create an OAuth Client in Frappe (/app/oauth-client/new) with Redirect URI "+in.RedirectURI+" and put its client id and secret on the site")
	default:
		return connector.Fail(id, title, fmt.Sprintf("reading OAuth Client %s answered HTTP %d", in.OAuthClient.ID, resp.StatusCode), manual)
	}
	var doc struct {
		Data struct {
			RedirectURIs string `json:"redirect_uris"`
			GrantType    string `json:"grant_type"`
			ResponseType string `json:"response_type"`
			Scopes       string `json:"scopes"`
			Skip         int    `json:"skip_authorization"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return connector.Fail(id, title, "the OAuth Client document could not be read", manual)
	}
	d := doc.Data
	var problems []string
	if in.RedirectURI != "" && !slices.Contains(strings.Fields(d.RedirectURIs), in.RedirectURI) {
		problems = append(problems, "its Redirect URIs do not include "+in.RedirectURI)
	}
	if d.GrantType != "Authorization Code" {
		problems = append(problems, "its Grant Type is "+connector.ERPWord(d.GrantType)+", not Authorization Code")
	}
	if d.ResponseType != "Code" {
		problems = append(problems, "its Response Type is "+connector.ERPWord(d.ResponseType)+", not Code")
	}
	for _, s := range strings.Fields(oauthScope) {
		if !slices.Contains(strings.Fields(d.Scopes), s) {
			problems = append(problems, "its Scopes lack "+s)
		}
	}
	if len(problems) > 0 {
		return connector.Fail(id, title, "OAuth Client "+in.OAuthClient.ID+": "+strings.Join(problems, "; "), manual)
	}
	found := "OAuth Client " + in.OAuthClient.ID + ": Authorization Code, Response Type Code, Scopes " + connector.ERPWord(d.Scopes) + ", redirect URI listed"
	if d.Skip == 1 {
		found += "; it skips the Confirm Access page (people are not asked in Frappe; erpgate's consent page still asks)"
	}
	return connector.Pass(id, title, found)
}
