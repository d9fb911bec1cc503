// Package usage records one mcp_request event per terminal MCP reply: a zap
// JSON log line at once, and a row in Postgres written in batches. Events
// never carry arguments, results, credentials, e-mail addresses or error
// text — only who (site, auth type), what (method, tool), how it ended
// (outcome, stable error code) and how long it took.
package usage

import (
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/platform/infra/redact"
)

// Outcome is how a request ended.
type Outcome string

// Outcomes.
const (
	Success   Outcome = "success"
	Error     Outcome = "error"
	Cancelled Outcome = "cancelled"
)

// Event is one terminal MCP reply.
type Event struct {
	// ID identifies the event in storage, so that a batch written twice
	// (its first answer lost) is stored once. Record sets it when zero.
	ID        uuid.UUID
	Timestamp time.Time // when the request started, UTC
	SiteID    uuid.UUID
	SiteSlug  string
	AuthType  string // "oauth" | "service_token"
	// ERPUser is the ERP user an OAuth call ran as ("" for a service
	// token), and ClientID the MCP client: the OAuth client id, or the
	// service token's id. Both are stored for the operator's viewer and
	// never logged: an ERP user id is often an e-mail address.
	ERPUser    string
	ClientID   string
	RequestID  string
	Method     string // MCP method, or "unknown"
	Tool       string // tool name for tools/call ("unknown" if unregistered), else ""
	Outcome    Outcome
	ErrorCode  string // stable code, "" on success
	DurationMS int64
	// ERPMS is how long a tools/call was with the ERP, in milliseconds
	// (sending each request to having read its answer, overlapping
	// requests counted once). Stored and logged for tools/call only.
	ERPMS int64
	// Approval is the stage of a write's approval this event was
	// (platform/store/approval): proposed, executed, failed or refused for a
	// write tool's tools/call; approved, rejected or withdrawn for the approval
	// page's events (method "approval"). "" for everything else.
	Approval string
	// RedactedCount is how many values redaction took out of a tools/call
	// result, and RedactedFields where (RedactedFields of the paths).
	RedactedCount  int
	RedactedFields string
}

// maxRedactedFields bounds the field list of one event: past it the list
// ends with ", …" (the count still counts every value).
const maxRedactedFields = 400

// RedactedFields names the fields of redacted paths for an event: each
// path with its array positions left out ("data[3].tax_id" is
// "data[].tax_id"), each once, sorted, joined by ", ", at most about 400
// bytes.
func RedactedFields(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	seen := make(map[string]bool, len(paths))
	var fields []string
	for _, p := range paths {
		f := redact.Field(p)
		if !seen[f] {
			seen[f] = true
			fields = append(fields, f)
		}
	}
	sort.Strings(fields)
	var b strings.Builder
	for i, f := range fields {
		if i > 0 && b.Len()+2+len(f) > maxRedactedFields {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f)
	}
	return b.String()
}

// Message is the short human summary shown in log viewers, built only from
// safe fields: "MCP list_sales_invoices: error (PERMISSION_DENIED)".
func (e Event) Message() string {
	what := e.Method
	if e.Tool != "" {
		what = e.Tool
	}
	msg := "MCP " + what + ": " + string(e.Outcome)
	if e.ErrorCode != "" {
		msg += " (" + e.ErrorCode + ")"
	}
	return msg
}

// MarshalLogObject writes the event's fields for zap.
func (e Event) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("event", "mcp_request")
	enc.AddString("site_id", e.SiteID.String())
	enc.AddString("site_slug", e.SiteSlug)
	enc.AddString("auth_type", e.AuthType)
	enc.AddString("request_id", e.RequestID)
	enc.AddString("timestamp", e.Timestamp.UTC().Format(time.RFC3339Nano))
	enc.AddString("method", e.Method)
	if e.Tool != "" {
		enc.AddString("tool", e.Tool)
	}
	enc.AddString("outcome", string(e.Outcome))
	if e.ErrorCode != "" {
		enc.AddString("error_code", e.ErrorCode)
	}
	enc.AddInt64("duration_ms", e.DurationMS)
	if e.Method == methodToolsCall {
		enc.AddInt64("erp_ms", e.ERPMS)
	}
	if e.Approval != "" {
		enc.AddString("approval", e.Approval)
	}
	if e.RedactedCount > 0 {
		enc.AddInt("redacted_count", e.RedactedCount)
	}
	return nil
}

// methodToolsCall is the MCP method whose events carry ERPMS.
const methodToolsCall = "tools/call"

func logEvent(log *zap.Logger, e Event) {
	log.Info(e.Message(), zap.Inline(e))
}
