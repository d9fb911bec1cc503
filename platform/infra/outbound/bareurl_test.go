package outbound

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestBareURLsNamesOnlySchemeHostAndPath: the URL an *url.Error names,
// however deep in the error and however wrapped (a lazy cause, a text
// made with %w, a join), is told by scheme, host and path; the error
// still unwraps to what it wrapped.
func TestBareURLsNamesOnlySchemeHostAndPath(t *testing.T) {
	cause := toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP redirected to another host")
	for _, tc := range []struct{ raw, want string }{
		{"https://u:pw-S3cret@sso.example/login?sid=sid-S3cret#frag-S3cret", `"https://sso.example/login"`},
		{"https://erp.example/entity/Default/24.200.001/Customer?$filter=Name%20eq%20'sid-S3cret'", `"https://erp.example/entity/Default/24.200.001/Customer"`},
		{"/Frames/Login.aspx?ReturnUrl=sid-S3cret", `"/Frames/Login.aspx"`},
		{"https://u:pw-S3cret%zz@sso.example/", `"(an address erpgate could not read)"`},
	} {
		ue := &url.Error{Op: "Get", URL: tc.raw, Err: cause}
		for _, err := range []error{
			ue,
			toolerr.Wrap(toolerr.UpstreamUnavailable, ue, "could not reach the ERP"),
			fmt.Errorf("frappe: verify on acme: %w", ue),
			errors.Join(errors.New("first"), fmt.Errorf("second: %w", ue)),
		} {
			got := BareURLs(err)
			text := got.Error()
			if strings.Contains(text, "S3cret") || !strings.Contains(text, tc.want) {
				t.Errorf("%q: %s, want it to name %s and no credential", tc.raw, text, tc.want)
			}
			var te *toolerr.Error
			if !errors.Is(got, err) || !errors.As(got, &te) {
				t.Errorf("%q: %v does not unwrap to what it wrapped", tc.raw, got)
			}
		}
	}
	plain := errors.New("no URL here")
	if BareURLs(plain) != plain || BareURLs(nil) != nil { //nolint:errorlint // the very same error value is the point
		t.Error("an error without an *url.Error is not returned as it is")
	}
}
