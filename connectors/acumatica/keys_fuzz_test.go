package acumatica

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzKeyRoute: a key value (the model's text) reaches Acumatica either
// as exactly one path segment that net/url and ASP.NET read back as the
// same text, or, when it cannot travel in a path, as an OData string
// literal that reads back as the same text. It never adds a segment,
// never names a route of its own, and never ends the literal early.
func FuzzKeyRoute(f *testing.F) {
	for _, k := range []string{
		"C000001", "SO-0001", "Credit Memo", "A.B", "O'Brien", "10,5", "A=B", "a@b",
		"A/B", "A|B", "50%", "A&B", "A:B", "A+B", "A.", "..", "A ", "A*", "A?B", `A\B`, "<A>",
		"$adHocSchema", "f19c8926-7e08-87b9-e047-c9edf3f03b7f", "{F19C8926-7E08-87B9-E047-C9EDF3F03B7F}",
		"'; drop", "A#B", "A;B", "é", "%2F", "a\x00b",
	} {
		f.Add(k)
	}
	c := &client{set: Settings{EndpointName: DefaultEndpointName, EndpointVersion: DefaultEndpointVersion}}
	specs := []keySpec{text("CustomerID", "")}
	f.Fuzz(func(t *testing.T, key string) {
		// runGetter and noteArgs trim the value and refuse an empty one.
		key = strings.TrimSpace(key)
		if key == "" {
			return
		}
		keys := []string{key}
		if keysNeedFilter(keys) || keysRouteElsewhere(keys, specs) {
			lit := odataV3Literal(keyText, key)
			if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
				t.Fatalf("literal %q of %q is not quoted", lit, key)
			}
			inner := lit[1 : len(lit)-1]
			if strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
				t.Fatalf("literal %q of %q ends early", lit, key)
			}
			if got := strings.ReplaceAll(inner, "''", "'"); got != key {
				t.Fatalf("literal %q reads back as %q, not %q", lit, got, key)
			}
			return
		}
		path := c.entityPath("Customer", key)
		u, err := url.Parse("https://erp.example" + path)
		if err != nil {
			t.Fatalf("path %q of key %q does not parse: %v", path, key, err)
		}
		segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
		if len(segs) != 5 {
			t.Fatalf("key %q makes path %q of %d segments, want 5", key, path, len(segs))
		}
		got, err := url.PathUnescape(segs[4])
		if err != nil || got != key {
			t.Fatalf("segment %q of key %q reads back as %q (%v)", segs[4], key, got, err)
		}
		// ASP.NET's default requestPathInvalidCharacters, Acumatica's key
		// separator, and what IIS folds away.
		if strings.ContainsAny(got, "/|<>*%&:\\?+") || got == "." || got == ".." || strings.HasSuffix(got, ".") || strings.HasPrefix(got, "$") {
			t.Fatalf("key %q travels in the path as %q", key, segs[4])
		}
	})
}
