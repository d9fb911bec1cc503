package acumaticatest

import (
	"strings"
	"time"
)

// scaleShort marks decimals Acumatica prints in shortest form ("0.0")
// because the graph computes them in memory instead of reading a column.
const scaleShort = -1

// inMemoryDecimals are the fields the real StockItem list prints short
// (AverageCost, LastCost, MaxCost, MinCost come from item statistics).
var inMemoryDecimals = map[string]bool{"AverageCost": true, "LastCost": true, "MaxCost": true, "MinCost": true}

// decimalScale gives the SQL scale of a decimal field by Acumatica's
// naming conventions: rates 8, quantities/unit prices/unit costs/percents
// 6, money 4.
func decimalScale(field string) int {
	if inMemoryDecimals[field] {
		return scaleShort
	}
	l := strings.ToLower(field)
	switch {
	case strings.HasSuffix(l, "rate") && (strings.Contains(l, "currency") || strings.Contains(l, "reciprocal")):
		return 8
	case strings.Contains(l, "qty"), strings.Contains(l, "quantity"), strings.Contains(l, "percent"),
		strings.Contains(l, "markup"), strings.Contains(l, "msrp"), strings.Contains(l, "dimension"),
		strings.Contains(l, "weight") && !strings.Contains(l, "total"), strings.Contains(l, "volume"),
		strings.Contains(l, "threshold"), strings.Contains(l, "servicelevel"), strings.Contains(l, "commission"),
		strings.Contains(l, "reorderpoint"), strings.Contains(l, "safetystock"), strings.Contains(l, "riskscore"),
		l == "completeon", l == "maxreceipt", l == "minreceipt", l == "costrate":
		return 6
	case strings.Contains(l, "price"):
		if strings.HasPrefix(l, "ext") || strings.HasPrefix(l, "freight") {
			return 4
		}
		return 6
	case strings.Contains(l, "cost"):
		if strings.HasPrefix(l, "ext") || strings.Contains(l, "extended") || strings.HasPrefix(l, "total") ||
			strings.HasPrefix(l, "control") || strings.HasPrefix(l, "freight") {
			return 4
		}
		return 6
	}
	return 4
}

// formatDateTime prints a DateTimeValue the way Acumatica does: ISO 8601
// with the offset and the fraction trimmed of trailing zeros
// ("2023-12-14T17:20:45.16+00:00", "2024-01-01T00:00:00+00:00").
func formatDateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.9999999-07:00")
}

// formatGIDateTime prints an Edm.DateTimeOffset in GI OData responses.
func formatGIDateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999Z07:00")
}

// formatLegacyGIDateTime prints a datetime without offset, as the
// documented parameterised-inquiry responses do ("2025-10-14T06:13:09.57").
func formatLegacyGIDateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999")
}

// date returns midnight UTC of y-m-d, the value of date-only fields.
func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// postPeriod renders the MMYYYY financial period of t ("062024").
func postPeriod(t time.Time) string { return t.Format("012006") }
