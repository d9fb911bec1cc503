package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// DefaultCanaryInquiry is the generic inquiry whose readability decides
// who may use erpgate, unless the site names another.
const DefaultCanaryInquiry = "MCPAccess"

// gateSettings are the site settings the access gate reads. The connector
// proper keeps these keys in its Settings.
type gateSettings struct {
	// Tenant is the tenant's login name, part of the OData URL.
	Tenant string `json:"tenant"`
	// CanaryGI is the generic inquiry of the access gate.
	CanaryGI string `json:"canary_gi"`
}

func (o OAuth) gateSettingsOf(site connector.Site) gateSettings {
	var s gateSettings
	_ = json.Unmarshal(site.Settings, &s)
	if strings.TrimSpace(s.CanaryGI) == "" {
		s.CanaryGI = DefaultCanaryInquiry
		if o.canary != nil {
			if name := o.canary(); name != "" {
				s.CanaryGI = name
			}
		}
	}
	return s
}

// CheckAccess reads one row of the canary inquiry over OData as the user
// (GET /t/{tenant}/api/odata/gi/{inquiry}?$top=1). It never inspects roles:
// whoever may read the inquiry may use erpgate, however the customer
// grants that. 200 allows; 403 denies; anything else (404, 5xx, no answer)
// is a set-up problem, not a denial, so it is never shown as "no access".
func (o OAuth) CheckAccess(ctx context.Context, site connector.Site, hc *http.Client) (connector.AccessCheck, error) {
	s := o.gateSettingsOf(site)
	causes := []string{
		fmt.Sprintf("the generic inquiry %s does not exist, or is not published (SM208000)", s.CanaryGI),
		fmt.Sprintf("the inquiry %s is not exposed via OData (Expose via OData on SM208000)", s.CanaryGI),
		fmt.Sprintf("the site's tenant setting (%q) is not the tenant's login name", s.Tenant),
		"the Acumatica instance is unreachable or failing",
	}
	misconfigured := func(detail string) (connector.AccessCheck, error) {
		return connector.AccessCheck{Decision: connector.AccessMisconfigured, Detail: detail, LikelyCauses: causes}, nil
	}
	if s.Tenant == "" {
		return misconfigured("the site has no tenant setting, so the inquiry's OData URL is unknown")
	}
	path := "/t/" + url.PathEscape(s.Tenant) + "/api/odata/gi/" + url.PathEscape(s.CanaryGI)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL(path, url.Values{"$top": {"1"}}), nil)
	if err != nil {
		return connector.AccessCheck{}, fmt.Errorf("acumatica: access check on %s: %w", site.Slug, err)
	}
	req.Header.Set("Accept", "application/json")
	// Redirects are not followed: Acumatica sends a Bearer call it cannot
	// serve (no API-user seat free) to /Frames/Error.aspx, an HTML page
	// that answers 200 to anyone.
	resp, err := noRedirects(hc).Do(req)
	if err != nil {
		return misconfigured("the inquiry " + s.CanaryGI + " could not be read: the ERP did not answer")
	}
	body, _ := outbound.ReadBody(resp)
	switch {
	case resp.StatusCode == http.StatusOK:
		var page struct {
			Value []json.RawMessage `json:"value"`
		}
		if json.Unmarshal(body, &page) != nil || page.Value == nil {
			return misconfigured(fmt.Sprintf("the inquiry %s answered HTTP 200 without its rows", s.CanaryGI))
		}
		return connector.AccessCheck{Decision: connector.AccessAllowed, Detail: "the inquiry " + s.CanaryGI + " is readable"}, nil
	case resp.StatusCode == http.StatusForbidden:
		return connector.AccessCheck{Decision: connector.AccessDenied, Detail: "the inquiry " + s.CanaryGI + " answered 403"}, nil
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		f := parseFailure(response{status: resp.StatusCode, header: resp.Header, body: body, location: resp.Header.Get("Location")}, false)
		if f.kind == failLoginLimit {
			return misconfigured(fmt.Sprintf("the inquiry %s could not be read: every API-user seat of the Acumatica licence is in use (API Login Limit)", s.CanaryGI))
		}
	}
	return misconfigured(fmt.Sprintf("the inquiry %s answered HTTP %d", s.CanaryGI, resp.StatusCode))
}
