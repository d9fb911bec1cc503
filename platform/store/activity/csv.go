package activity

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"
)

// UsageCSVHeader is the first line of a usage export.
var UsageCSVHeader = []string{"id", "occurred_at", "site_id", "site_slug", "auth_type", "erp_user", "client_id",
	"request_id", "method", "tool", "outcome", "error_code", "duration_ms", "erp_ms", "redacted_count", "redacted_fields"}

// AuditCSVHeader is the first line of an audit export.
var AuditCSVHeader = []string{"source", "id", "occurred_at", "site_id", "site_slug", "event", "erp_user", "client_id",
	"actor_kind", "actor", "outcome", "reason", "repeats"}

// ExportUsage writes every usage event matching f to w as CSV, newest
// first, row by row as Postgres sends them.
func (s *Store) ExportUsage(ctx context.Context, f Filter, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(UsageCSVHeader); err != nil {
		return err
	}
	err := s.EachUsage(ctx, f, func(e UsageEvent) error {
		erp := ""
		if e.HasERPMS {
			erp = strconv.FormatInt(e.ERPMS, 10)
		}
		return cw.Write(cells(strconv.FormatInt(e.ID, 10), e.OccurredAt.Format(time.RFC3339Nano), siteIDText(e.SiteID),
			e.SiteSlug, e.AuthType, e.ERPUser, e.ClientID, e.RequestID, e.Method, e.Tool, e.Outcome, e.ErrorCode,
			strconv.FormatInt(e.DurationMS, 10), erp, strconv.Itoa(e.RedactedCount), e.RedactedFields))
	})
	cw.Flush()
	if err != nil {
		return err
	}
	return cw.Error()
}

// ExportAudit writes every audit event matching f to w as CSV.
func (s *Store) ExportAudit(ctx context.Context, f Filter, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(AuditCSVHeader); err != nil {
		return err
	}
	err := s.EachAudit(ctx, f, func(e AuditEvent) error {
		return cw.Write(cells(e.SourceName(), strconv.FormatInt(e.ID, 10), e.OccurredAt.Format(time.RFC3339Nano),
			siteIDText(e.SiteID), e.SiteSlug, e.Event, e.ERPUser, e.ClientID, e.ActorKind, e.Actor, e.Outcome, e.Reason, strconv.Itoa(e.Repeats)))
	})
	cw.Flush()
	if err != nil {
		return err
	}
	return cw.Error()
}

// cells neutralises what a spreadsheet would run as a formula: an ERP user
// or client name is chosen by someone outside, and a cell starting with =,
// +, -, @, a tab or a carriage return is a formula in Excel, LibreOffice
// and Google Sheets. Such a cell gets a leading apostrophe (OWASP's advice).
func cells(values ...string) []string {
	for i, v := range values {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			values[i] = "'" + v
		}
	}
	return values
}
