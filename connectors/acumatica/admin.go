package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// DefaultAdminInquiry is the administrators' inquiry unless a site's
// admin_gi setting names another.
const DefaultAdminInquiry = "MCPAdmin"

// administratorRole is Acumatica's built-in role with access to every
// system object, whatever other roles' access rights say.
const administratorRole = "Administrator"

var _ connector.AdminProof = (*Connector)(nil)

// CheckAdmin proves that the signed-in person has the Administrator role.
// Acumatica's OAuth and contract REST API name no roles, so the proof is
// the administrators' inquiry: a generic inquiry over PX.SM.UsersInRoles
// (Username, Rolename), exposed via OData and published for the
// Administrator role only. As the user (their token is in hc) it reads
// userinfo for their user name, then
//
//	GET /t/{tenant}/api/odata/gi/{admin_gi}?$filter=Username eq '{user}' and Rolename eq 'Administrator'
//
// A user is an administrator only when the ERP lets them read the inquiry
// (403 otherwise) AND it lists their own Administrator role: an inquiry
// published to more roles by mistake still refuses everyone else. The
// limits are in docs/registration.md.
func (c *Connector) CheckAdmin(ctx context.Context, site connector.Site, hc *http.Client, user connector.UpstreamUser) (connector.AdminCheck, error) {
	fail := func(err error) (connector.AdminCheck, error) {
		// Without the URL: a refused redirect's Location may quote the
		// token the request carried, and sign-in pages log this error.
		return connector.AdminCheck{}, fmt.Errorf("acumatica: administrator check on %s: %w", site.Slug, outbound.WithoutURL(err))
	}
	s := siteSettings(site)
	if s.Tenant == "" {
		return fail(toolerr.New(toolerr.InvalidArgument, "the site has no tenant setting, so the administrators' inquiry cannot be addressed"))
	}
	inquiry := s.adminInquiry()
	var ui userinfo
	if err := getJSON(ctx, hc, site.URL("/identity/connect/userinfo", nil), &ui); err != nil {
		return fail(err)
	}
	if ui.Sub == "" || ui.PreferredUsername == "" {
		return fail(toolerr.New(toolerr.UpstreamInvalidResponse, "userinfo named no user"))
	}
	if user.ID != "" && !strings.EqualFold(ui.Sub, user.ID) {
		return connector.AdminCheck{Evidence: "the ERP token belongs to another user than the one who signed in"}, nil
	}
	// The sign-in must be the site's tenant's: one instance serves several
	// tenants, each with its own administrators, and a client id
	// "GUID@Tenant" signs people in to its own tenant. Whether the instance
	// answers another tenant's inquiry for this token is not left to it.
	if signedIn := subjectTenant(ui.Sub); !strings.EqualFold(signedIn, s.Tenant) {
		if signedIn == "" {
			return connector.AdminCheck{Evidence: "signed in without the ERP naming their tenant, so is not proven an administrator of tenant " + s.Tenant}, nil
		}
		return connector.AdminCheck{Evidence: "signed in to tenant " + signedIn + ", not to the site's tenant " + s.Tenant +
			" (an OAuth client signs people in to the tenant named after the @ in its client id)"}, nil
	}
	filter := "Username eq " + odataString(ui.PreferredUsername) + " and Rolename eq " + odataString(administratorRole)
	path := "/t/" + url.PathEscape(s.Tenant) + "/api/odata/gi/" + url.PathEscape(inquiry)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL(path, url.Values{"$filter": {filter}}), nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fail(err)
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return fail(err)
	}
	if refused := credentialsRefusedError(resp.StatusCode, body); refused != nil {
		return fail(refused)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusForbidden:
		return connector.AdminCheck{Evidence: "may not read the administrators' inquiry " + inquiry + ", so lacks the Administrator role"}, nil
	case http.StatusNotFound:
		return connector.AdminCheck{Evidence: "the administrators' inquiry " + inquiry + " does not exist or is not exposed via OData in tenant " + s.Tenant}, nil
	default:
		return fail(toolerr.New(toolerr.UpstreamUnavailable, "the administrators' inquiry %s answered HTTP %d", inquiry, resp.StatusCode))
	}
	admin, err := listsAdministrator(body, ui.PreferredUsername)
	if err != nil {
		return fail(fmt.Errorf("the administrators' inquiry %s: %w", inquiry, err))
	}
	if admin {
		return connector.AdminCheck{Admin: true, Evidence: "has the Administrator role"}, nil
	}
	return connector.AdminCheck{Evidence: "lacks the Administrator role"}, nil
}

// subjectTenant is the tenant of an OIDC subject, which Acumatica writes
// "user@Tenant" (the tenant's login name after the last @, since a user
// name may hold one too); "" when it names none.
func subjectTenant(sub string) string {
	i := strings.LastIndexByte(sub, '@')
	if i < 0 {
		return ""
	}
	return sub[i+1:]
}

// listsAdministrator reads an OData page of the administrators' inquiry
// and reports whether a row gives username the Administrator role. A body
// that is not an OData page with a value array is an error.
func listsAdministrator(body []byte, username string) (bool, error) {
	var page struct {
		Value *[]map[string]any `json:"value"`
	}
	if err := outbound.UnmarshalJSON(body, &page); err != nil {
		return false, err
	}
	if !json.Valid(body) {
		return false, toolerr.New(toolerr.UpstreamInvalidResponse, "the answer is not one JSON document")
	}
	if page.Value == nil {
		return false, toolerr.New(toolerr.UpstreamInvalidResponse, "the answer has no value array")
	}
	for _, row := range *page.Value {
		name, _ := row["Username"].(string)
		role, _ := row["Rolename"].(string)
		if username != "" && strings.EqualFold(name, username) && strings.EqualFold(role, administratorRole) {
			return true, nil
		}
	}
	return false, nil
}

// odataString is an OData string literal: single quotes, doubled inside.
func odataString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// getJSON GETs url and decodes a 200 JSON answer into v; anything else is
// an error.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return err
	}
	if refused := credentialsRefusedError(resp.StatusCode, body); refused != nil {
		return refused
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return toolerr.New(toolerr.AuthExpired, "the ERP did not accept the sign-in token (HTTP 401)")
	case resp.StatusCode != http.StatusOK:
		return toolerr.New(toolerr.UpstreamUnavailable, "the ERP answered HTTP %d", resp.StatusCode)
	}
	if err := outbound.UnmarshalJSON(body, v); err != nil {
		return err
	}
	return nil
}

// credentialsRefusedError is AUTH_EXPIRED for Acumatica's HTTP 500 with
// PXLogin's "Invalid credentials" (the user's password changed since the
// token was issued, or they were disabled): the ERP refused the sign-in,
// which a moment later it will do again, so it is no outage. Any other
// answer is nil. Acumatica's words are not repeated: the body may quote
// what the request carried.
func credentialsRefusedError(status int, body []byte) error {
	if _, refused := credentialsRefused(status, body); !refused {
		return nil
	}
	return toolerr.New(toolerr.AuthExpired, "the ERP no longer accepts the sign-in token (HTTP %d, Invalid credentials)", status)
}

// adminInquiry is the site's administrators' inquiry.
func (s Settings) adminInquiry() string {
	if s.AdminGI == "" {
		return DefaultAdminInquiry
	}
	return s.AdminGI
}
