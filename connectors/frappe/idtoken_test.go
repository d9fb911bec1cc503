package frappe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/secrets"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// hs256 makes a JWT as Frappe's finalize_id_token does.
func hs256(header, claims, secret string) string {
	signing := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func TestIDTokenShowsWhetherTheClientSecretIsTheERPs(t *testing.T) {
	client := connector.OAuthClient{ID: "c0D0jbiBHw", Secret: secrets.Secret("3f1a0c9e2b")}
	header := `{"typ":"jwt","alg":"HS256"}`
	good := hs256(header, `{"aud":"c0D0jbiBHw","email":"it.admin@demo.example"}`, "3f1a0c9e2b")
	if err := checkIDTokenSecret(good, client); err != nil {
		t.Fatalf("the right secret: %v", err)
	}
	if err := checkIDTokenSecret(hs256(header, `{"aud":["x","c0D0jbiBHw"]}`, "3f1a0c9e2b"), client); err != nil {
		t.Errorf("an audience list naming the client: %v", err)
	}
	if err := checkIDTokenSecret("", client); err != nil {
		t.Errorf("no id_token: %v", err)
	}
	refused := map[string]string{
		"another secret":    hs256(header, `{"aud":"c0D0jbiBHw"}`, "not-the-secret"),
		"another client":    hs256(header, `{"aud":"other"}`, "3f1a0c9e2b"),
		"unsigned":          hs256(`{"alg":"none"}`, `{"aud":"c0D0jbiBHw"}`, "3f1a0c9e2b"),
		"not a JWT":         "abc.def",
		"signature changed": good[:len(good)-2] + "AA",
	}
	for name, tok := range refused {
		err := checkIDTokenSecret(tok, client)
		var te *toolerr.Error
		if !errors.As(err, &te) || (te.Code != toolerr.PermissionDenied && te.Code != toolerr.UpstreamInvalidResponse) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := checkIDTokenSecret(hs256(header, `{"aud":"c0D0jbiBHw"}`, "not-the-secret"), client); !errors.As(err, new(*toolerr.Error)) || err.(*toolerr.Error).Code != toolerr.PermissionDenied {
		t.Errorf("another secret: %v, want PERMISSION_DENIED", err)
	}
}

// FuzzCheckIDTokenSecret: whatever the ERP sends as id_token, the check
// answers without panicking, and accepts nothing it did not sign.
func FuzzCheckIDTokenSecret(f *testing.F) {
	client := connector.OAuthClient{ID: "c1", Secret: secrets.Secret("s1")}
	f.Add(hs256(`{"alg":"HS256"}`, `{"aud":"c1"}`, "s1"))
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, tok string) {
		if checkIDTokenSecret(tok, client) == nil && tok != "" {
			m := hmac.New(sha256.New, []byte("s1"))
			i := strings.LastIndexByte(tok, '.')
			m.Write([]byte(tok[:i]))
			sig, err := base64.RawURLEncoding.DecodeString(tok[i+1:])
			if err != nil || !hmac.Equal(m.Sum(nil), sig) {
				t.Fatalf("accepted %q", tok)
			}
		}
	})
}
