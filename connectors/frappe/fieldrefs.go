package frappe

import (
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// The Frappe fields a list call sorts, searches or filters on, so that the
// engine refuses those the redaction rules cover (connector.Tool.Fields):
// sorting or searching on a redacted field reveals its value a call at a
// time (issue 14). The field names come from each tool's allowlists, so
// only a deployment's own redaction patterns can make one refused.

// listFieldArgs are the arguments of a list that name or imply fields.
type listFieldArgs struct {
	OrderBy string `json:"order_by"`
	Search  string `json:"search"`
}

// listFields returns the fields a directory or document list's arguments
// use: the sort field the caller chose (a default order is erpgate's
// choice, not an oracle the caller steers), the search fields
// when there is a search, and the field of each allowlisted filter given.
func listFields(searchFields []string, filters []dirFilter) func(json.RawMessage) ([]connector.FieldRef, error) {
	return func(args json.RawMessage) ([]connector.FieldRef, error) {
		var a listFieldArgs
		var raw map[string]json.RawMessage
		if len(args) > 0 {
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
			}
			if err := json.Unmarshal(args, &raw); err != nil {
				return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
			}
		}
		var refs []connector.FieldRef
		if a.OrderBy != "" {
			refs = append(refs, connector.FieldRef{Arg: "order_by", Name: a.OrderBy})
		}
		if a.Search != "" {
			for _, f := range searchFields {
				refs = append(refs, connector.FieldRef{Arg: "search", Name: f})
			}
		}
		for _, df := range filters {
			if _, ok := raw[df.arg]; ok {
				refs = append(refs, connector.FieldRef{Arg: df.arg, Name: df.field})
			}
		}
		return refs, nil
	}
}
