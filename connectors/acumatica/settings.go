package acumatica

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The endpoint erpgate reads unless a site names another, and the versions
// of it this connector knows.
const (
	DefaultEndpointName    = "Default"
	DefaultEndpointVersion = "24.200.001"
	endpointVersion25      = "25.200.001"
)

// maxRecordsCeiling bounds the max_records setting: one upstream query never
// asks for more rows than this.
const maxRecordsCeiling = 10000

// Settings are an Acumatica site's connector settings.
type Settings struct {
	// EndpointName and EndpointVersion select the contract-based endpoint
	// (/entity/{name}/{version}). Default/24.200.001 unless set; the
	// Default endpoint is read at 24.200.001 or 25.200.001.
	EndpointName    string `json:"endpoint_name"`
	EndpointVersion string `json:"endpoint_version"`
	// Tenant is the tenant's login name, part of every OData URL
	// (/t/{tenant}/api/odata/gi). Generic-inquiry tools need it.
	Tenant string `json:"tenant,omitempty"`
	// CanaryGI is the generic inquiry of the access gate; empty, the
	// deployment's (Options.CanaryInquiry, by default MCPAccess).
	CanaryGI string `json:"canary_gi,omitempty"`
	// AdminGI is the administrators' inquiry that proves a person
	// administers the instance, for registration and the site owner's
	// page (default MCPAdmin; see admin.go).
	AdminGI string `json:"admin_gi,omitempty"`
	// MaxRecords, when set, caps the rows one query returns on this site,
	// below the deployment's cap. It predates the site's own max_records
	// live setting, which the engine applies for every connector (in
	// call.MaxRecords); both are kept, and the lower applies.
	MaxRecords int `json:"max_records,omitempty"`
}

var (
	endpointNamePattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	endpointVersionPattern = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,4}){1,3}$`)
	inquiryName            = regexp.MustCompile(inquiryNamePattern)
	tenantPattern          = regexp.MustCompile(`^[^/\\?#%\x00-\x1f\x7f]{1,128}$`)
)

// NormalizeSettings validates a site's settings and returns them in
// canonical form with defaults filled in.
func (*Connector) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	s, err := parseSettings(raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func invalidSettings(format string, args ...any) error {
	e := toolerr.New(toolerr.InvalidArgument, format, args...)
	e.Message = "invalid Acumatica settings: " + e.Message
	return e
}

// invalidSetting is invalidSettings for the value of the setting key, with
// the problem a form shows after its label (connector.SettingError).
func invalidSetting(key, problem, format string, args ...any) error {
	e := connector.InvalidSetting(key, problem, format, args...)
	e.Message = "invalid Acumatica settings: " + e.Message
	return e
}

// tenantProblem says what is wrong with a tenant login name tenantPattern
// refuses, as a form shows it after its label.
func tenantProblem(tenant string) string {
	switch {
	case !utf8.ValidString(tenant):
		return "is not valid text"
	case strings.ContainsFunc(tenant, unicode.IsControl):
		return "holds a control character"
	case strings.ContainsAny(tenant, `/\?#%`):
		return `must not hold /, \, ?, # or %`
	case utf8.RuneCountInString(tenant) > 128:
		return "is longer than 128 characters"
	}
	return "is not a tenant login name"
}

// parseSettings decodes, validates and completes settings.
func parseSettings(raw json.RawMessage) (Settings, error) {
	s, err := connector.DecodeSettings[Settings](raw)
	if err != nil {
		return Settings{}, invalidSettings("%s", toolerr.Classify(err).Message)
	}
	s.EndpointName = strings.TrimSpace(s.EndpointName)
	s.EndpointVersion = strings.TrimSpace(s.EndpointVersion)
	s.Tenant = strings.TrimSpace(s.Tenant)
	s.CanaryGI = strings.TrimSpace(s.CanaryGI)
	s.AdminGI = strings.TrimSpace(s.AdminGI)
	if s.EndpointName == "" {
		s.EndpointName = DefaultEndpointName
	}
	if s.EndpointVersion == "" {
		s.EndpointVersion = DefaultEndpointVersion
	}
	switch {
	case !endpointNamePattern.MatchString(s.EndpointName):
		return Settings{}, invalidSetting("endpoint_name", "must be letters, digits and underscores, starting with a letter, at most 64",
			"endpoint_name %s is not an endpoint name (letters, digits and underscores)", toolerr.Quote(s.EndpointName))
	case !endpointVersionPattern.MatchString(s.EndpointVersion):
		return Settings{}, invalidSetting("endpoint_version", "is not a version such as "+DefaultEndpointVersion,
			"endpoint_version %s is not a version such as 24.200.001", toolerr.Quote(s.EndpointVersion))
	case strings.EqualFold(s.EndpointName, DefaultEndpointName) && s.EndpointVersion != DefaultEndpointVersion && s.EndpointVersion != endpointVersion25:
		return Settings{}, invalidSetting("endpoint_version", "must be "+DefaultEndpointVersion+" or "+endpointVersion25+" for the Default endpoint",
			"the Default endpoint is supported at versions %s and %s, not %s", DefaultEndpointVersion, endpointVersion25, s.EndpointVersion)
	case s.Tenant != "" && (!tenantPattern.MatchString(s.Tenant) || s.Tenant == "." || s.Tenant == ".."):
		// A dot segment would be read as a step in the path, not a tenant.
		return Settings{}, invalidSetting("tenant", tenantProblem(s.Tenant), "tenant %s is not a tenant login name", toolerr.Quote(s.Tenant))
	case s.CanaryGI != "" && !inquiryName.MatchString(s.CanaryGI):
		return Settings{}, invalidSetting("canary_gi", "is not a generic inquiry name", "canary_gi %s is not a generic inquiry name", toolerr.Quote(s.CanaryGI))
	case s.AdminGI != "" && !inquiryName.MatchString(s.AdminGI):
		return Settings{}, invalidSetting("admin_gi", "is not a generic inquiry name", "admin_gi %s is not a generic inquiry name", toolerr.Quote(s.AdminGI))
	case s.MaxRecords < 0 || s.MaxRecords > maxRecordsCeiling:
		return Settings{}, invalidSetting("max_records", fmt.Sprintf("must be between 1 and %d", maxRecordsCeiling), "max_records must be between 1 and %d (0 or absent: the deployment's cap)", maxRecordsCeiling)
	}
	if strings.EqualFold(s.EndpointName, DefaultEndpointName) {
		s.EndpointName = DefaultEndpointName
	}
	return s, nil
}

// siteSettings returns a site's settings. They were normalised when the
// site was saved; a record that no longer parses falls back to defaults
// field by field rather than failing every call.
func siteSettings(site connector.Site) Settings {
	s, err := parseSettings(site.Settings)
	if err == nil {
		return s
	}
	var loose Settings
	_ = json.Unmarshal(site.Settings, &loose)
	s = Settings{EndpointName: DefaultEndpointName, EndpointVersion: DefaultEndpointVersion, CanaryGI: DefaultCanaryInquiry, Tenant: strings.TrimSpace(loose.Tenant)}
	if loose.AdminGI = strings.TrimSpace(loose.AdminGI); inquiryName.MatchString(loose.AdminGI) {
		s.AdminGI = loose.AdminGI
	}
	return s
}

// endpoint names the configured endpoint, "Default/24.200.001".
func (s Settings) endpoint() string { return s.EndpointName + "/" + s.EndpointVersion }

// recordCap is the most rows one query may return: the engine's cap (the
// deployment's, or the site's own live setting if lower), lowered by this
// connector setting.
func (s Settings) recordCap(call *connector.Call) int {
	limit := call.MaxRecords
	if limit <= 0 {
		limit = 1000
	}
	if s.MaxRecords > 0 && s.MaxRecords < limit {
		limit = s.MaxRecords
	}
	return limit
}

// SiteRules: an Acumatica instance often lives under a virtual directory
// (https://erp.example.com/AcumaticaERP), and one instance serves several
// tenants, each a separate company with its own users: the tenant tells
// two sites at one base URL apart. The key is the tenant as NormalizeSettings
// wrote it; "" for a site without one.
func (*Connector) SiteRules() connector.SiteRules {
	return connector.SiteRules{BaseURLPath: true, IdentityName: "tenant", Identity: func(settings json.RawMessage) string {
		var s struct {
			Tenant string `json:"tenant"`
		}
		_ = json.Unmarshal(settings, &s)
		return s.Tenant
	}}
}

// RedactionExempt: in Acumatica's contract, TaxID is only ever a tax's code
// (NYSTATE, EUVAT): the key of the Tax entity and a field of its tax
// detail lines (TaxDetail, InvoiceTaxDetail, SalesInvoiceTaxDetail,
// PurchaseOrderTaxDetail and the other *TaxDetail sub-entities of the
// 24.200.001 endpoint). A party's registration number is TaxRegistrationID,
// which stays redacted. Redacting TaxID hid which tax a record is.
func (*Connector) RedactionExempt() []string { return []string{"TaxID"} }
