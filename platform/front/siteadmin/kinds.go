package siteadmin

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector"
)

// SettingField is a connector setting people set on erpgate's pages (the
// owner's page, the console's new site). Other settings (Acumatica's
// canary inquiry, a row cap) keep their defaults there.
type SettingField struct {
	Key, Label, Help string
}

// settingFields lists, per kind of site, the settings the pages offer.
var settingFields = map[string][]SettingField{
	"frappe": {
		{Key: "default_company", Label: "Default company", Help: "The company tools use when a request names none. Leave it empty for none."},
	},
	"acumatica": {
		{Key: "tenant", Label: "Tenant", Help: "The tenant's login name. Moving the site to another tenant takes a sign-in as an administrator of that tenant."},
		{Key: "endpoint_name", Label: "Endpoint name", Help: "The contract-based REST endpoint, normally Default."},
		{Key: "endpoint_version", Label: "Endpoint version", Help: "The endpoint's version, such as 24.200.001."},
	},
}

// fieldLabel names an input of a site (an Error's Field or Missing) as
// people read it, for the sentence an audit event keeps: a setting by the
// pages' label for it, the other inputs as the new-site forms call them.
func fieldLabel(field string) string {
	switch field {
	case "kind":
		return "Kind of ERP"
	case "slug":
		return "Short name"
	case "display_name":
		return "Display name"
	case "base_url":
		return "ERP address"
	case "settings":
		return "The settings"
	}
	key, ok := strings.CutPrefix(field, "settings.")
	if !ok {
		return ""
	}
	if label := SettingLabel(field); label != "" {
		return label
	}
	return "The setting " + key
}

// SettingLabel is the pages' label of an error's field "settings.<key>"
// (Error.Field) when the pages offer that setting, of any kind (no two
// kinds share a key); "" for any other field.
func SettingLabel(field string) string {
	key, ok := strings.CutPrefix(field, "settings.")
	if !ok {
		return ""
	}
	for _, fields := range settingFields {
		for _, f := range fields {
			if f.Key == key {
				return f.Label
			}
		}
	}
	return ""
}

// SettingFields are the settings the pages offer for a kind of site.
func SettingFields(kind string) []SettingField { return settingFields[kind] }

// kindNames are the kinds as people call them.
var kindNames = map[string]string{"frappe": "Frappe/ERPNext", "acumatica": "Acumatica"}

// KindName is a kind of site as people call it.
func KindName(kind string) string {
	if n, ok := kindNames[kind]; ok {
		return n
	}
	return kind
}

// siteOfKind is "a site" of a kind, with its article: "an Acumatica
// site", "a Frappe/ERPNext site".
func siteOfKind(kind string) string { return withArticle(KindName(kind)) + " site" }

// Kinds are the kinds of site this deployment serves.
func (s *Service) Kinds() []string { return s.deps.Registry.Kinds() }

// APICredentialFields are the fields of a kind's fixed API credential;
// false for a kind this deployment does not serve.
func (s *Service) APICredentialFields(kind string) ([]connector.CredentialField, bool) {
	conn, ok := s.deps.Registry.Get(kind)
	if !ok {
		return nil, false
	}
	return conn.APICredentialFields(), true
}

// FormSettings are the settings of a kind's form: value gives what was
// typed for each of SettingFields(kind) by key, and empty ones are left
// out. A value that is not valid text is refused (Invalid, Field
// "settings.<key>"), since JSON would replace its bytes without a word.
func FormSettings(kind string, value func(key string) string) (json.RawMessage, error) {
	m := map[string]string{}
	for _, f := range settingFields[kind] {
		v := value(f.Key)
		if v == "" {
			continue
		}
		if !utf8.ValidString(v) {
			return nil, &Error{Kind: Invalid, Message: "settings: " + f.Key + " must be valid UTF-8", Field: "settings." + f.Key, Problem: "is not valid text"}
		}
		m[f.Key] = v
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, internal(err)
	}
	return raw, nil
}
