package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Kind is the site kind this connector serves.
const Kind = "frappe"

// Connector implements connector.Connector for Frappe/ERPNext.
type Connector struct{}

// New returns the Frappe connector.
func New() *Connector { return &Connector{} }

var _ connector.Connector = (*Connector)(nil)

// Kind returns "frappe".
func (*Connector) Kind() string { return Kind }

// Tools returns the catalogue.
func (*Connector) Tools() []connector.Tool { return catalogue() }

// Settings are a Frappe site's connector settings.
type Settings struct {
	// DefaultCompany is used by company-scoped tools when the caller names
	// no company.
	DefaultCompany string `json:"default_company,omitempty"`
}

// NormalizeSettings validates settings and returns them in canonical form.
func (*Connector) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	s, err := connector.DecodeSettings[Settings](raw)
	if err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "invalid Frappe settings: %s", toolerr.Classify(err).Message)
	}
	s.DefaultCompany = strings.TrimSpace(s.DefaultCompany)
	if len(s.DefaultCompany) > 140 {
		return nil, connector.InvalidSetting("default_company", "is longer than 140 characters", "invalid Frappe settings: default_company is longer than 140 characters")
	}
	if strings.ContainsFunc(s.DefaultCompany, unicode.IsControl) {
		// No company name has one; NUL would not even be stored (jsonb).
		return nil, connector.InvalidSetting("default_company", "holds a control character", "invalid Frappe settings: default_company holds a control character")
	}
	return json.Marshal(s)
}

func siteSettings(site connector.Site) Settings {
	var s Settings
	_ = json.Unmarshal(site.Settings, &s)
	return s
}

// APICredentialFields are the API key and secret of a dedicated Frappe user.
func (*Connector) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{
		{Name: "api_key", Description: "API key of the Frappe user the service connection runs as", Secret: true},
		{Name: "api_secret", Description: "API secret of that user", Secret: true},
	}
}

// APIAuthorizer sends Frappe token authentication: "token <key>:<secret>".
func (*Connector) APIAuthorizer(_ connector.Site, fields map[string]secrets.Secret) (connector.Authorizer, error) {
	key, secret := fields["api_key"].Reveal(), fields["api_secret"].Reveal()
	if key == "" || secret == "" {
		return nil, fmt.Errorf("frappe: api_token connection lacks api_key or api_secret")
	}
	header := "token " + key + ":" + secret
	return connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", header)
		return nil
	}), nil
}

// VerifyAPICredential asks Frappe who the credential belongs to.
func (*Connector) VerifyAPICredential(ctx context.Context, site connector.Site, client *http.Client) (string, error) {
	user, err := newClient(site, client).loggedUser(ctx)
	if err != nil {
		return "", err
	}
	if user == "" || strings.EqualFold(user, "Guest") {
		return "", toolerr.New(toolerr.AuthExpired, "Frappe accepted the request but as Guest; check the API key and secret")
	}
	return user, nil
}

// RedactionExempt names Frappe fields that match the built-in redaction
// rules but hold record names or ledger codes, not account numbers:
// bank_account, party_bank_account and default_bank_account link to Bank
// Account (or Account) records ("Main - ANZ - DHNZ"), cash_bank_account to
// a ledger Account, and an Account's account_number is its code in the
// chart of accounts ("1110"). The numbers themselves (bank_account_no, iban,
// bank_party_account_number, bank_party_iban) stay redacted.
func (*Connector) RedactionExempt() []string {
	return []string{"bank_account", "party_bank_account", "default_bank_account", "cash_bank_account", "account_number"}
}

// SiteRules: a Frappe site is an origin. Frappe serves each site of a bench
// under its own host name (it picks the site by the Host header) and only
// at the web root, so a base URL never has a path and is always one site.
func (*Connector) SiteRules() connector.SiteRules { return connector.SiteRules{} }
