package frappe

import (
	"net/url"
	"regexp"
	"strings"
)

// Routes for trace spans (connector.RouteShaper): a request's path with
// the document's name replaced, so that no span names a document, a user
// or anything else a call asked for.

var (
	// doctypeName is a DocType's name as erpgate sends it: a word or a
	// few ("Sales Invoice"), never an address or a document's name with
	// punctuation.
	doctypeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]{0,63}$`)
	// methodName is a whitelisted method's dotted Python path.
	methodName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,15}$`)
)

// RouteShape names the route of a path erpgate sends to Frappe:
// /api/resource/{doctype} and /api/resource/{doctype}/{name} with the
// DocType kept, /api/method/{method} with the method kept; "" for any
// other path.
func (*Connector) RouteShape(escapedPath string) string {
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	if len(segs) < 3 || segs[0] != "api" {
		return ""
	}
	switch segs[1] {
	case "resource":
		route := "/api/resource/" + keepSegment(segs[2], doctypeName, "{doctype}")
		if len(segs) > 3 {
			route += "/{name}" + strings.Repeat("/{part}", len(segs)-4)
		}
		return route
	case "method":
		return "/api/method/" + keepSegment(segs[2], methodName, "{method}") + strings.Repeat("/{part}", len(segs)-3)
	}
	return ""
}

// keepSegment is seg, an escaped path segment, when its unescaped text matches
// shape, else placeholder.
func keepSegment(seg string, shape *regexp.Regexp, placeholder string) string {
	if s, err := url.PathUnescape(seg); err == nil && shape.MatchString(s) {
		return seg
	}
	return placeholder
}
