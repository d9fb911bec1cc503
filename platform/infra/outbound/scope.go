package outbound

import (
	"net/url"
	"strings"
)

// siteScope is where a site's credential may go: its origin and, for an
// instance under a virtual directory, that directory's path. Another
// application may share the origin (IIS serves several under one host), so
// a request elsewhere on it carries no credential.
type siteScope struct {
	origin string
	// prefix is the virtual directory ("/AcumaticaERP"), "" for the web
	// root.
	prefix string
}

func scopeOf(base *url.URL) siteScope {
	return siteScope{origin: originOf(base.Scheme, base.Host), prefix: strings.TrimRight(base.Path, "/")}
}

// sameOrigin reports whether u is on the site's origin.
func (s siteScope) sameOrigin(u *url.URL) bool {
	return originOf(u.Scheme, u.Host) == s.origin
}

// contains reports whether u is on the site's origin and under its
// directory. The comparison is exact on the decoded path; a path with a
// "." or ".." segment (also spelt %2e, or with IIS's "\" separator) is
// outside, whatever it starts with, because the server resolves it
// elsewhere.
func (s siteScope) contains(u *url.URL) bool {
	if !s.sameOrigin(u) {
		return false
	}
	if s.prefix == "" {
		return true
	}
	if hasDotSegment(u) {
		return false
	}
	p := strings.ReplaceAll(u.Path, `\`, "/")
	return p == s.prefix || strings.HasPrefix(p, s.prefix+"/")
}

// hasDotSegment reports whether u's decoded path has a segment made only
// of dots and spaces ("." and ".." above all), with "/" (also sent as %2F)
// or IIS's "\" as separators. A server that decodes the path before
// resolving it, or a proxy in front of the ERP that cleans paths, reads
// such a path as another address; Windows drops a segment's trailing dots
// and spaces, so on IIS "..." or ".. " can act as "..". No ERP record is
// named so.
func hasDotSegment(u *url.URL) bool {
	p := u.Path
	for start := 0; start < len(p); {
		end := start
		dots := true
		for ; end < len(p) && p[end] != '/' && p[end] != '\\'; end++ {
			if c := p[end]; c != '.' && c != ' ' {
				dots = false
			}
		}
		if dots && end > start && strings.IndexByte(p[start:end], '.') >= 0 {
			return true
		}
		start = end + 1
	}
	return false
}
