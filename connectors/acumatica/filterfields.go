package acumatica

import (
	"encoding/json"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The field names a call's filter, order, select and expand reference, so
// that the engine can refuse those the redaction rules cover before
// anything is sent (connector.Tool.Fields): a filter on a redacted field
// would let a caller recover its value by binary search while every row
// shows [REDACTED] (issue 14).

// odataNonFields are the OData v3 and v4 operators and literals that are
// spelt like identifiers, and $orderby's directions.
var odataNonFields = map[string]bool{
	"eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true, "and": true, "or": true,
	"not": true, "add": true, "sub": true, "mul": true, "div": true, "mod": true, "has": true, "in": true,
	"true": true, "false": true, "null": true, "asc": true, "desc": true, "INF": true, "NaN": true,
}

// odataFieldNames returns the field names (and paths such as
// MainContact/Email) an OData $filter or $orderby expression names, in
// order. Function names, keywords and literals are not fields; a custom
// field named in a literal (cf.String(f='Document.UsrSSN')) is. It fails
// only on a quote that is never closed.
func odataFieldNames(expr string) ([]string, error) {
	var names []string
	customField := false // inside cf.X( … ), where f='…' names a field
	afterCF := false     // "cf" was the last word (cf . String, spaced)
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '\'':
			end, ok := quotedEnd(expr, i)
			if !ok {
				return nil, toolerr.New(toolerr.InvalidArgument, "the filterExpression has a quote (') that is never closed; quote text as 'text' and write a quote inside it twice")
			}
			if customField {
				if name := strings.ReplaceAll(expr[i+1:end-1], "''", "'"); name != "" {
					names = append(names, name)
				}
				customField = false
			}
			i = end
		case isIdentStart(c):
			j := i + 1
			for j < len(expr) && (isIdentPart(expr[j]) || expr[j] == '/' || expr[j] == '.') {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			switch {
			case j < len(expr) && expr[j] == '\'':
				// A typed literal: datetimeoffset'…', guid'…'.
				end, ok := quotedEnd(expr, j)
				if !ok {
					return nil, toolerr.New(toolerr.InvalidArgument, "the filterExpression has a quote (') that is never closed; quote text as 'text' and write a quote inside it twice")
				}
				j = end
			case k < len(expr) && expr[k] == '(':
				// A function: substringof, contains, cf.String, any.
				customField = strings.HasPrefix(word, "cf.") || afterCF
			case word == "cf" || word == "cf.":
			case customField && word == "f":
			case !odataNonFields[word]:
				names = append(names, strings.TrimRight(word, "/."))
			}
			afterCF = word == "cf" || word == "cf."
			i = j
		case c >= '0' && c <= '9':
			// Numbers, and v4's bare dates and GUIDs: letters and digits
			// that start with a digit are one literal.
			j := i + 1
			for j < len(expr) && (isIdentPart(expr[j]) || expr[j] == '-' || expr[j] == ':' || expr[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return names, nil
}

// quotedEnd returns the index just past the quoted literal that starts
// at expr[i] (” is a quote inside it).
func quotedEnd(expr string, i int) (int, bool) {
	for j := i + 1; j < len(expr); j++ {
		if expr[j] == '\'' {
			if j+1 < len(expr) && expr[j+1] == '\'' {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// queryFields reports the fields of a filterExpression, select, expand
// and orderBy argument, whichever the tool has.
func queryFields(args json.RawMessage) ([]connector.FieldRef, error) {
	var a struct {
		FilterExpression string   `json:"filterExpression"`
		OrderBy          string   `json:"orderBy"`
		Select           []string `json:"select"`
		Expand           []string `json:"expand"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
		}
	}
	var refs []connector.FieldRef
	for _, q := range []struct{ arg, expr string }{{"filterExpression", a.FilterExpression}, {"orderBy", a.OrderBy}} {
		names, err := odataFieldNames(q.expr)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			refs = append(refs, connector.FieldRef{Arg: q.arg, Name: n})
		}
	}
	for _, s := range a.Select {
		refs = append(refs, connector.FieldRef{Arg: "select", Name: s})
	}
	for _, e := range a.Expand {
		refs = append(refs, connector.FieldRef{Arg: "expand", Name: e})
	}
	return refs, nil
}
