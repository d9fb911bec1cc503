package authserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRegistration checks what any registration document that erpgate
// accepts leaves in the database: redirect URIs that pass the policy, at
// most maxRedirectURIs of them, a bounded name, and only bounded
// informational fields.
func FuzzRegistration(f *testing.F) {
	for _, seed := range []string{
		`{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none","client_name":"x"}`,
		`{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"client_uri":"https://claude.ai","contacts":["a@b.example"],"padding":"xxxx"}`,
		`{"redirect_uris":["com.example.app:/cb"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"software_id":"s","software_version":"1"}`,
		`{"redirect_uris":["http://127.evil.example/cb"]}`,
	} {
		f.Add([]byte(seed))
	}
	s := &Server{}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > maxRegistrationBytes {
			return
		}
		var req registrationRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		c, err := s.registeredClient(req)
		if err != nil {
			return
		}
		if len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > maxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(c.RedirectURIs))
		}
		for _, u := range c.RedirectURIs {
			if checkRedirectURI(u) != nil {
				t.Fatalf("accepted redirect URI %q", u)
			}
		}
		if utf8.RuneCountInString(c.Name) > maxClientNameLength {
			t.Fatalf("accepted a name of %d characters", utf8.RuneCountInString(c.Name))
		}
		var stored map[string]any
		if err := json.Unmarshal(c.Metadata, &stored); err != nil {
			t.Fatalf("stored metadata %q: %v", c.Metadata, err)
		}
		for k, v := range stored {
			switch k {
			case "client_uri", "logo_uri", "tos_uri", "policy_uri":
				if len(v.(string)) > maxMetadataURILength {
					t.Fatalf("stored %s of %d bytes", k, len(v.(string)))
				}
			case "software_id", "software_version":
				if len(v.(string)) > maxShortFieldLength {
					t.Fatalf("stored %s of %d bytes", k, len(v.(string)))
				}
			case "contacts":
				if len(v.([]any)) > maxContacts {
					t.Fatalf("stored %d contacts", len(v.([]any)))
				}
			default:
				t.Fatalf("stored a field erpgate does not use: %q", k)
			}
		}
	})
}

func TestShownNameIsAtMost200Characters(t *testing.T) {
	exact := strings.Repeat("é", maxClientNameLength)
	if got := shownName(exact); got != exact {
		t.Errorf("a name of %d characters shown as %d", maxClientNameLength, len([]rune(got)))
	}
	if got, want := shownName(exact+"x"), exact+"…"; got != want {
		t.Errorf("a name of %d characters shown as %d, want %d and an ellipsis", maxClientNameLength+1, len([]rune(got)), maxClientNameLength)
	}
	if got := shownName(" Claude \u202eDesktop "); got != "Claude Desktop" {
		t.Errorf("shown as %+q", got)
	}
}
