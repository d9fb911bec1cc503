package frappe

import (
	"bytes"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The Frappe fields a list call sorts, searches or filters on, so that the
// engine refuses those the redaction rules cover (connector.Tool.Fields):
// sorting or searching on a redacted field reveals its value a call at a
// time (issue 14). The field names come from each tool's allowlists, so
// only a deployment's own redaction patterns can make one refused.

// listFields returns the fields a directory or document list's arguments
// use: the sort field the caller chose (a default order is erpgate's
// choice, not an oracle the caller steers), the search fields when there
// is a search, and the field of each allowlisted filter given. It reads
// the arguments without decoding them (a call without these arguments
// costs no allocation).
func listFields(searchFields []string, filters []dirFilter) func(json.RawMessage) ([]connector.FieldRef, error) {
	return func(args json.RawMessage) ([]connector.FieldRef, error) {
		if len(args) == 0 || !mayName(args, filters) {
			return nil, nil
		}
		var refs []connector.FieldRef
		var bad error
		err := rawjson.EachMember(args, func(f rawjson.Field) {
			switch {
			case f.Is("order_by"):
				var field string
				if err := json.Unmarshal(f.Value, &field); err != nil {
					bad = err
					return
				}
				refs = append(refs, connector.FieldRef{Arg: "order_by", Name: field})
			case f.Is("search"):
				if string(bytes.TrimSpace(f.Value)) == `""` {
					return // an empty search searches nothing
				}
				for _, name := range searchFields {
					refs = append(refs, connector.FieldRef{Arg: "search", Name: name})
				}
			default:
				for _, df := range filters {
					if f.Is(df.arg) {
						refs = append(refs, connector.FieldRef{Arg: df.arg, Name: df.field})
					}
				}
			}
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
		}
		return refs, nil
	}
}

// mayName reports whether args may have a member listFields reports: it
// names one of them, or has an escape (a name may be written escaped).
func mayName(args []byte, filters []dirFilter) bool {
	if bytes.IndexByte(args, '\\') >= 0 || quotedIn(args, "order_by") || quotedIn(args, "search") {
		return true
	}
	for _, df := range filters {
		if quotedIn(args, df.arg) {
			return true
		}
	}
	return false
}

// quotedIn reports whether b has name between quotes.
func quotedIn(b []byte, name string) bool {
	for from := 0; ; {
		i := bytes.Index(b[from:], []byte(name))
		if i < 0 {
			return false
		}
		i += from
		if i > 0 && b[i-1] == '"' && i+len(name) < len(b) && b[i+len(name)] == '"' {
			return true
		}
		from = i + 1
	}
}
