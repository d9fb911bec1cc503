package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// FuzzDecodeBody checks the admin API's body decoding on any body and
// Content-Type: a body it accepts has only the request's own field names
// and decodes as encoding/json decodes it; anything else is a 4xx with a
// message that names no Go type.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range [][2]string{
		{"application/json", `{"slug":"acme","kind":"frappe","display_name":"Acme","base_url":"https://erp.acme.example","settings":{"default_company":"Acme Ltd"}}`},
		{"application/json; charset=utf-8", `{"display_name":"Acme","status":"disabled","shared_callback":false}`},
		{"", `{"slug":1}`},
		{"text/plain", `{}`},
		{"application/json", `{"slug":"a","extra":true}`},
		{"application/json", `{"slug":"a"} {"slug":"b"}`},
		{"application/json", `null`},
		{"application/json", ``},
	} {
		f.Add(seed[0], []byte(seed[1]))
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		for _, dst := range []any{&createSiteRequest{}, &updateSiteRequest{}} {
			req := httptest.NewRequest(http.MethodPost, "/sites", strings.NewReader(string(body)))
			req.Header.Set(echo.HeaderContentType, contentType)
			c := e.NewContext(req, httptest.NewRecorder())
			err := decodeBody(c, dst, false)
			if err != nil {
				var ae *apiError
				if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Message == "" {
					t.Fatalf("body %q: %v, want a 4xx with a message", body, err)
				}
				for _, goWord := range []string{"adminapi.", "json.", "struct", "Go value", "[]uint8", "*string"} {
					if strings.Contains(ae.Message, goWord) {
						t.Fatalf("body %q: message %q names a Go type", body, ae.Message)
					}
				}
				continue
			}
			var top map[string]json.RawMessage
			if json.Unmarshal(body, &top) != nil {
				t.Fatalf("accepted body %q, which is not one JSON object", body)
			}
			for name := range top {
				if !slices.Contains(jsonFieldNames(dst), name) {
					t.Fatalf("accepted body %q with field %q", body, name)
				}
			}
			ref := reflect.New(reflect.TypeOf(dst).Elem()).Interface()
			if err := json.Unmarshal(body, ref); err != nil || !reflect.DeepEqual(ref, dst) {
				t.Fatalf("body %q decoded as %+v; encoding/json gives %+v (%v)", body, dst, ref, err)
			}
		}
	})
}
