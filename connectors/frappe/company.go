package frappe

import (
	"context"
	"errors"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// companyInfo is what tools need to know about the company a call is about.
type companyInfo struct {
	// Name is the company's exact record name, as the ERP spells it.
	Name string
	// Currency is the company (base) currency of base_* amounts and of the
	// accounting reports.
	Currency string
}

// companyProp is the company argument of company-scoped tools.
func companyProp(what string) schema.Property {
	return schema.Prop("company", schema.String(what+" Exact company name (see list_companies). When omitted, the site's default company is used if the operator configured one.").Len(1, 140))
}

// companyOrDefault returns the company argument, else the site's default
// company, else "".
func companyOrDefault(call *connector.Call, arg string) string {
	if arg != "" {
		return arg
	}
	return siteSettings(call.Site).DefaultCompany
}

// requireCompany returns the company a company-scoped call is about, or an
// INVALID_ARGUMENT error that says to add it. why completes the sentence
// "company is needed because ...".
func requireCompany(call *connector.Call, arg, why string) (string, error) {
	if c := companyOrDefault(call, arg); c != "" {
		return c, nil
	}
	return "", toolerr.New(toolerr.InvalidArgument, "add company (an exact name from list_companies): %s", why)
}

// company reads the company record as the caller. This makes a company the
// caller may not see a PERMISSION_DENIED and a misspelt one a NOT_FOUND,
// where a filter alone would silently return nothing, which a person would
// read as "no records".
func (c *client) company(ctx context.Context, name string) (companyInfo, error) {
	doc, err := c.get(ctx, "Company", name)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			switch te.Code {
			case toolerr.NotFound:
				return companyInfo{}, toolerr.Wrap(toolerr.NotFound, err, "there is no company %q in the ERP; use an exact name from list_companies", name)
			case toolerr.PermissionDenied:
				return companyInfo{}, toolerr.Wrap(toolerr.PermissionDenied, err, "this ERP user may not see company %q; their user permissions limit them to other companies (see list_companies)", name)
			}
		}
		return companyInfo{}, err
	}
	info := companyInfo{Name: name}
	if n, ok := doc["name"].(string); ok && n != "" {
		info.Name = n
	}
	info.Currency, _ = doc["default_currency"].(string)
	return info, nil
}
