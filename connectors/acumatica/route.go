package acumatica

import (
	"net/url"
	"regexp"
	"strings"
)

// Routes for trace spans (connector.RouteShaper): a request's path with
// record keys, the tenant and an inquiry's parameters replaced, so that no
// span names a record, a company or anything else a call asked for.

var (
	// endpointWord is an endpoint's name or version ("Default",
	// "24.200.001").
	endpointWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// entityName is a contract-based entity's name ("SalesOrder").
	entityName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	// identityWord is a segment of the identity server's fixed paths
	// ("connect", "token", ".well-known").
	identityWord = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
)

// RouteShape names the route of a path erpgate sends to Acumatica:
// /entity/{endpoint}/{version}/{Entity}/{key}… with the endpoint, version
// and entity kept and each key replaced; /t/{tenant}/api/odata/gi/{inquiry}
// with the inquiry's name kept (inquiryName) unless it carries parameters; /identity/… as it
// is. "" for any other path.
func (*Connector) RouteShape(escapedPath string) string {
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	switch {
	case segs[0] == "entity":
		return entityRoute(segs[1:])
	case segs[0] == "t" && len(segs) >= 5 && segs[2] == "api" && segs[3] == "odata" && segs[4] == "gi":
		route := "/t/{tenant}/api/odata/gi"
		for i, seg := range segs[5:] {
			switch {
			case i == 0 && seg == "$metadata":
				route += "/$metadata"
			case i == 0:
				route += "/" + keepSegment(seg, inquiryName, "{inquiry}")
			default:
				route += "/{part}"
			}
		}
		return route
	case segs[0] == "identity":
		route := ""
		for _, seg := range segs {
			route += "/" + keepSegment(seg, identityWord, "{part}")
		}
		return route
	}
	return ""
}

// entityRoute is the route of /entity and what follows it (segs).
func entityRoute(segs []string) string {
	route := "/entity"
	if len(segs) >= 1 && segs[0] == "auth" {
		for _, seg := range segs {
			route += "/" + keepSegment(seg, identityWord, "{part}")
		}
		return route
	}
	for i, seg := range segs {
		switch {
		case i < 2:
			route += "/" + keepSegment(seg, endpointWord, "{endpoint}")
		case i == 2 && (seg == "swagger.json" || seg == "$adHocSchema"):
			route += "/" + seg
		case i == 2:
			route += "/" + keepSegment(seg, entityName, "{entity}")
		case seg == "$adHocSchema" || seg == "files":
			route += "/" + seg
		default:
			route += "/{key}"
		}
	}
	return route
}

// keepSegment is seg, an escaped path segment, when its unescaped text
// matches shape, else placeholder.
func keepSegment(seg string, shape *regexp.Regexp, placeholder string) string {
	if s, err := url.PathUnescape(seg); err == nil && shape.MatchString(s) {
		return seg
	}
	return placeholder
}
