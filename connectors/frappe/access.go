package frappe

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// checkReadable asks the ERP, as the caller, for one row of doctype, so
// that a user whose role may not read it hears PERMISSION_DENIED before a
// spoken party name is resolved. Without it such a user was shown
// candidates to choose from and refused only after choosing (issue 15,
// item 4). Ordering by name reads the first row of the primary key.
func (c *client) checkReadable(ctx context.Context, doctype string) error {
	_, err := c.list(ctx, doctype, listQuery{Fields: []string{"name"}, OrderBy: "name asc", PageLength: 1})
	var te *toolerr.Error
	if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
		return toolerr.Wrap(toolerr.PermissionDenied, err, "the ERP does not let this user read %s (HTTP 403; their role does not allow it), so the name was not looked up", plural(doctype))
	}
	return err
}

// checkReportAccess is checkReadable for a report tool: it asks for the
// report's script (frappe.desk.query_report.get_script), which runs the
// same permission checks as running it (get_report_doc: the Report's roles
// and "report" permission on its DocType) without computing anything.
func (c *client) checkReportAccess(ctx context.Context, report string) error {
	v := url.Values{}
	v.Set("report_name", report)
	var message json.RawMessage
	err := c.method(ctx, "frappe.desk.query_report.get_script", v, &message)
	var te *toolerr.Error
	if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
		return toolerr.Wrap(toolerr.PermissionDenied, err, "the ERP does not let this user run the %s report (HTTP 403; their role does not allow it), so the name was not looked up", report)
	}
	return err
}

// plural names a DocType's documents in a sentence: "sales invoices".
func plural(doctype string) string {
	s := strings.ToLower(doctype)
	switch {
	case strings.HasSuffix(s, "y"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"):
		return s
	}
	return s + "s"
}
