package register

import (
	"crypto/rand"
	"errors"
	"html/template"
	"net/http"
	"regexp"
	"strings"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/clientsetup"
	"github.com/erpgate/erpgate/web/pagekit"
)

// resultPage is the last step: what the registered site is and how to use
// it.
type resultPage struct {
	ID          string
	DisplayName string
	KindLabel   string
	BaseURL     string
	MCPURL      string
	ClientSetup template.HTML
	ManageURL   string
	ServiceMCP  string
	ERPUser     string
	// Open says how long the page stays open.
	Open string
	// Fields are the API credential's fields, for the optional form.
	Fields []connector.CredentialField
	// HasAPI: the site has a verified API credential.
	HasAPI bool
	extra  resultExtra
	CSRF   string
}

// resultExtra is what one answer adds: an error of the API credential
// form, or the service token, shown once.
type resultExtra struct {
	Error       string
	Values      map[string]string
	Token       string
	TokenPrefix string
	// Expiry says when the token expires, as a sentence.
	Expiry   string
	Verified string
}

func (p resultPage) Error() string       { return p.extra.Error }
func (p resultPage) Token() string       { return p.extra.Token }
func (p resultPage) TokenPrefix() string { return p.extra.TokenPrefix }
func (p resultPage) TokenExpiry() string { return p.extra.Expiry }
func (p resultPage) Verified() string    { return p.extra.Verified }

// Label names a credential field on the page.
func (p resultPage) Label(name string) string {
	if l, ok := fieldLabels[name]; ok {
		return l
	}
	return name
}

var fieldLabels = map[string]string{"api_key": "API key", "api_secret": "API secret", "client_id": "Client ID",
	"client_secret": "Client secret", "username": "Username", "password": "Password"}

func (p resultPage) Value(name string) string { return p.extra.Values[name] }

func (h *Handler) renderResult(w http.ResponseWriter, r *http.Request, status int, browser string, p pendingReg, extra resultExtra) {
	site, conn, ok := h.siteOf(w, r, p)
	if !ok {
		return
	}
	_, _, cerr := h.deps.Sites.GetConnection(r.Context(), site.ID, "api_token")
	page := resultPage{ID: h.linkID(p.ID), DisplayName: site.DisplayName, KindLabel: labelOf(site.Kind), BaseURL: site.BaseURL,
		MCPURL: h.kit.URL("/sites/" + site.Slug + "/mcp"), ClientSetup: clientsetup.HTML(h.kit.URL("/sites/" + site.Slug + "/mcp")), ManageURL: h.kit.URL("/sites/" + site.Slug + "/manage"),
		ServiceMCP: h.kit.URL("/service/mcp"), ERPUser: p.ERPUser, Open: h.ttlText(),
		Fields: conn.APICredentialFields(), HasAPI: cerr == nil, extra: extra,
		CSRF: pagekit.CSRFToken(browser, clientPurpose(p.ID))}
	if err := h.kit.Render(w, status, h.pages.result, page, pagekit.Options{FormAction: []string{"'self'"}, Script: true}); err != nil {
		h.log.Error("render registration result", zap.Error(err))
	}
}

// siteOf returns the site a registration became, and its connector, or
// answers itself.
func (h *Handler) siteOf(w http.ResponseWriter, r *http.Request, p pendingReg) (sites.Site, connector.Connector, bool) {
	site, err := h.deps.Sites.GetSite(r.Context(), p.SiteID)
	if err != nil {
		// Deleted meanwhile (by its owner, or the operator).
		h.unknown(w)
		return sites.Site{}, nil, false
	}
	conn, ok := h.deps.Registry.Get(site.Kind)
	if !ok {
		h.internal(w, "connector of the registered site", errUnknown)
		return sites.Site{}, nil, false
	}
	return site, conn, true
}

// postAPI verifies and saves the optional fixed API credential, then
// issues a service token, shown once on the answer.
func (h *Handler) postAPI(w http.ResponseWriter, r *http.Request) {
	p, browser, ok := h.registrationPost(w, r, stageRegistered)
	if !ok {
		return
	}
	ctx := r.Context()
	site, conn, ok := h.siteOf(w, r, p)
	if !ok {
		return
	}
	if !h.stillAdmin(w, r, browser, p, site) {
		return
	}
	creds := map[string]string{}
	kept := map[string]string{}
	for _, f := range conn.APICredentialFields() {
		creds[f.Name] = strings.TrimSpace(r.PostForm.Get(f.Name))
		if !f.Secret {
			kept[f.Name] = creds[f.Name]
		}
	}
	// The credential is saved only with its token, which expires as one
	// issued on the owner's page does unless the owner chooses otherwise
	// there: a refused token (the operator disabled the site meanwhile)
	// leaves nothing saved.
	admin := siteadmin.ERPAdmin(p.ERPUser)
	saved, st, value, err := h.deps.Admin.PutAPIConnectionWithToken(ctx, admin, site, creds, "registration", siteadmin.DefaultTokenLifetimeDays)
	if err != nil {
		var se *siteadmin.Error
		if !errors.As(err, &se) || se.Kind == siteadmin.Internal {
			h.internal(w, "save API credential", err)
			return
		}
		problem, status := se.PeopleSentence(nil), http.StatusBadRequest
		switch se.Kind {
		case siteadmin.Rejected:
			// The layer's words are the connector's, written for tool
			// calls; the ERP's refusal is said plainly here.
			problem = "The ERP refused these credentials, so nothing was saved. Check them (copy them again, without spaces) and try again."
		case siteadmin.Conflict:
			status = http.StatusConflict
		}
		h.renderResult(w, r, status, browser, p, resultExtra{Error: problem, Values: kept})
		return
	}
	h.renderResult(w, r, http.StatusOK, browser, p, resultExtra{Token: value.Reveal(), TokenPrefix: st.Prefix,
		Expiry: siteadmin.TokenExpiry(st), Verified: saved.VerifiedIdentity})
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// newSlug makes a site's short name from its display name, with a random
// suffix: the page never reveals whether another site has a name, as a
// chosen slug refused as taken would.
func newSlug(displayName string) string {
	base := strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(displayName), "-"), "-")
	if len(base) > 36 {
		base = strings.Trim(base[:36], "-")
	}
	if base == "" {
		base = "site"
	}
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return base + "-" + string(b)
}
