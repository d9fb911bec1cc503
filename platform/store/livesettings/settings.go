// Package livesettings keeps the settings an operator may change while
// erpgate runs (redaction patterns, row cap, call limits, the Acumatica
// canary inquiry, per-site tool exposure and read-only switch) in
// Postgres, and gives every replica the values in force as one immutable
// snapshot behind an atomic pointer: reading a setting on the hot path is
// a pointer load. A change reaches every replica through NOTIFY at once
// (Notified), and, if a notification was missed, at the next poll: its
// owner calls Load on a timer, which reads only the version when nothing
// changed. Environment variables (platform/infra/config) give the defaults; a
// stored value overrides one for the deployment or for one site.
package livesettings

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Type is the type of a setting's value.
type Type string

// The types of value.
const (
	TypeList   Type = "list"   // a list of strings
	TypeInt    Type = "int"    // a whole number within Min and Max
	TypeString Type = "string" // one line of text
	TypeBool   Type = "bool"
)

// Scope says where a setting may be set.
type Scope int

// The scopes.
const (
	Deployment Scope = 1 << iota
	Site
)

// Def describes one setting.
type Def struct {
	Name  string
	Label string
	Help  string
	Type  Type
	Scope Scope
	// Env names where the default comes from (an environment variable),
	// or is empty for a built-in default.
	Env      string
	Min, Max int
	// Additive: a site's value adds to the deployment's instead of
	// replacing it (the redaction patterns).
	Additive bool
	// OperatorOnly: only erpgate's operator sets it for a site, never the
	// site's owner (the site's call ceilings, which protect its ERP's
	// licence throttle).
	OperatorOnly bool
	// LowersOnly: a site's own value may only lower the deployment's (the
	// row cap): one above the deployment's in force is refused, and where
	// the deployment's is lowered below it later, the deployment's applies.
	LowersOnly bool
}

// The settings' names.
const (
	RedactionAdd    = "redaction_add"
	RedactionSkip   = "redaction_skip"
	MaxRecords      = "max_records"
	UserConcurrency = "user_concurrency"
	UserPerMinute   = "user_per_minute"
	SiteConcurrency = "site_concurrency"
	SitePerMinute   = "site_per_minute"
	CanaryInquiry   = "acumatica_canary_inquiry"
	Tools           = "tools"
	ReadOnly        = "read_only"
	// The write policy (docs/writes.md). Writes are off unless a site
	// enables them tool by tool; every write still needs a person's
	// approval, which no setting turns off.
	WriteTools           = "write_tools"
	ServiceWrites        = "service_writes"
	ServiceWriteApprover = "service_write_approver"
)

// Defs lists every live setting, in the order pages show them.
var Defs = []Def{
	{Name: RedactionAdd, Label: "Redaction: extra field patterns", Type: TypeList, Scope: Deployment | Site, Env: "ERPGATE_REDACT_PATTERNS", Additive: true,
		Help: "Field-name patterns to redact besides the built-in ones, matched by word parts. A site's patterns add to the deployment's."},
	{Name: RedactionSkip, Label: "Redaction: patterns not to redact", Type: TypeList, Scope: Deployment | Site, Env: "ERPGATE_REDACT_SKIP", Additive: true,
		Help: "Field-name patterns exempted from redaction. A site's add to the deployment's."},
	// design.md: "Max records per query: default 1000, capped per site." A
	// site's own cap lowers the deployment's for it, whatever its
	// connector; it protects the site's ERP, so its owner may set it too.
	{Name: MaxRecords, Label: "Max records per query", Type: TypeInt, Scope: Deployment | Site, Env: "ERPGATE_MAX_RECORDS", Min: 1, Max: 100_000, LowersOnly: true,
		Help: "The most rows one upstream query may return. A site's own value lowers the deployment's for it; it cannot be above the deployment's."},
	{Name: UserConcurrency, Label: "Per-user concurrent calls", Type: TypeInt, Scope: Deployment, Env: "ERPGATE_LIMIT_USER_CONCURRENCY", Min: 1, Max: 1 << 30,
		Help: "Calls one user (or service token) may have in flight on one site, across replicas."},
	{Name: UserPerMinute, Label: "Per-user calls per minute", Type: TypeInt, Scope: Deployment, Env: "ERPGATE_LIMIT_USER_PER_MINUTE", Min: 1, Max: 1 << 30,
		Help: "Calls one user may make on one site per minute."},
	// A site's own ceilings replace the deployment's for it (seed 000: an
	// Acumatica of a small licence tier throttles at some 6 calls at once
	// and 50 a minute), so such a site is protected without lowering every
	// other site's ceiling.
	{Name: SiteConcurrency, Label: "Per-site concurrent calls (ceiling)", Type: TypeInt, Scope: Deployment | Site, Env: "ERPGATE_LIMIT_SITE_CONCURRENCY", Min: 1, Max: 1 << 30, OperatorOnly: true,
		Help: "Calls one site may have in flight, all users together. A site's own value replaces the deployment's for it, such as the few calls at once a small licence of its ERP allows."},
	{Name: SitePerMinute, Label: "Per-site calls per minute (ceiling)", Type: TypeInt, Scope: Deployment | Site, Env: "ERPGATE_LIMIT_SITE_PER_MINUTE", Min: 1, Max: 1 << 30, OperatorOnly: true,
		Help: "Calls one site may receive per minute, all users together. A site's own value replaces the deployment's for it."},
	{Name: CanaryInquiry, Label: "Acumatica canary inquiry", Type: TypeString, Scope: Deployment,
		Help: "The generic inquiry whose readability admits a person to an Acumatica site, for sites that name none in their own settings."},
	{Name: Tools, Label: "Tools offered", Type: TypeList, Scope: Site,
		Help: "Tool names, or the groups read, write and destructive, that the site offers. Empty offers every tool."},
	{Name: ReadOnly, Label: "Read-only", Type: TypeBool, Scope: Site,
		Help: "When on, the site offers only tools that read."},
	{Name: WriteTools, Label: "Write tools enabled", Type: TypeList, Scope: Site,
		Help: "Names of the write tools the site enables. Empty enables none. Every write still waits for the signed-in person's approval on erpgate's page."},
	{Name: ServiceWrites, Label: "Service tokens may propose writes", Type: TypeBool, Scope: Site,
		Help: "When on, a service token may call the enabled write tools; each write then waits for the approval of the ERP user named below."},
	{Name: ServiceWriteApprover, Label: "Approver of service-token writes", Type: TypeString, Scope: Site,
		Help: "The ERP user (as the ERP names them, such as an e-mail address) who approves writes proposed by service tokens, signed in through the ERP."},
}

// Lookup returns the definition of name.
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(Defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return Defs[i], true
}

// ToolGroups are the names that stand for every tool of an effect.
var ToolGroups = []string{"read", "write", "destructive"}

// inquiryName is the shape of an Acumatica generic inquiry name, as the
// connector accepts it in a site's settings.
var inquiryName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9 _-]{0,127}$`)

// Parse turns text as a person typed it (one list item a line or
// comma-separated; a number; on/off) into the setting's stored value, or
// says in a sentence why it cannot be.
func (d Def) Parse(text string) (any, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("%s must be text: what was sent is not valid UTF-8", d.Label)
	}
	text = strings.TrimSpace(text)
	switch d.Type {
	case TypeList:
		items := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' })
		return d.check(items)
	case TypeInt:
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, d.rangeError()
		}
		return d.check(n)
	case TypeBool:
		switch strings.ToLower(text) {
		case "on", "true", "yes", "1":
			return true, nil
		case "off", "false", "no", "0", "":
			return false, nil
		}
		return nil, fmt.Errorf("%s must be on or off", d.Label)
	default:
		return d.check(text)
	}
}

// FromJSON reads a value given as JSON (the admin API): an array of
// strings, a number, true or false, or a string, by the setting's type.
func (d Def) FromJSON(raw json.RawMessage) (any, error) {
	v, err := d.decode(raw)
	if err != nil {
		want := map[Type]string{TypeList: "an array of strings", TypeInt: "a whole number", TypeBool: "true or false", TypeString: "a string"}[d.Type]
		if d.Type == TypeInt {
			return nil, d.rangeError()
		}
		return nil, fmt.Errorf("%s must be %s", d.Label, want)
	}
	return d.check(v)
}

func (d Def) rangeError() error {
	return fmt.Errorf("%s must be a whole number from %d to %d", d.Label, d.Min, d.Max)
}

// check validates a value of the setting's type and returns it in its
// stored form (list entries trimmed, without blanks or repeats).
func (d Def) check(v any) (any, error) {
	switch x := v.(type) {
	case []string:
		items := []string{}
		for _, f := range x {
			if f = strings.TrimSpace(f); f != "" && !slices.Contains(items, f) {
				// A comma separates entries where a person types them
				// (Parse): an entry holding one would be shown as two and
				// split when saved again.
				if len(f) > 200 || hasControl(f) || strings.Contains(f, ",") {
					return nil, fmt.Errorf("%s: each entry is one line of at most 200 characters, without control characters or commas", d.Label)
				}
				items = append(items, f)
			}
		}
		if len(items) > 200 {
			return nil, fmt.Errorf("%s: at most 200 entries", d.Label)
		}
		return items, nil
	case int:
		if x < d.Min || x > d.Max {
			return nil, d.rangeError()
		}
		return x, nil
	case string:
		x = strings.TrimSpace(x)
		if d.Name == CanaryInquiry && !inquiryName.MatchString(x) {
			return nil, fmt.Errorf("%s must be a generic inquiry's name: letters, digits, spaces, _ or -, at most 128", d.Label)
		}
		if hasControl(x) || len(x) > 200 {
			return nil, fmt.Errorf("%s must be one line of at most 200 characters, without control characters", d.Label)
		}
		return x, nil
	}
	return v, nil
}

// hasControl reports whether s has a control character (line breaks, NUL,
// which Postgres cannot store in JSON) or is not valid UTF-8.
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0
}

// decode reads a stored value of d; a value of the wrong type (a row
// written by hand) is an error.
func (d Def) decode(raw []byte) (any, error) {
	var err error
	switch d.Type {
	case TypeList:
		var v []string
		if err = json.Unmarshal(raw, &v); err == nil && v != nil {
			return v, nil
		}
	case TypeInt:
		var v int
		if err = json.Unmarshal(raw, &v); err == nil && v >= d.Min && v <= d.Max {
			return v, nil
		}
	case TypeBool:
		var v bool
		if err = json.Unmarshal(raw, &v); err == nil {
			return v, nil
		}
	default:
		var v string
		if err = json.Unmarshal(raw, &v); err == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("livesettings: stored %s is not a valid %s: %s", d.Name, d.Type, raw)
}

// Format shows a value as the settings form takes it back.
func Format(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, "\n")
	case bool:
		if x {
			return "on"
		}
		return "off"
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}
