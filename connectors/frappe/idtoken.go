package frappe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// Frappe's token endpoint never compares the client secret
// (authenticate_client loads the OAuth Client by id only), so a wrong
// secret cannot be told by the exchange itself. But with the openid scope,
// which erpgate always asks for, its answer carries an id_token that
// finalize_id_token signs with HS256 under the OAuth Client's
// client_secret: the one place where the ERP shows which secret it holds.
// A code exchange checks it, so that a registration, and a secret rotated
// on the owner's page, is saved only with the secret the ERP has.

// errWrongSecret is the refusal of an id_token signed with another secret.
func errWrongSecret() error {
	return toolerr.New(toolerr.PermissionDenied,
		"the ERP signed its ID token with another client secret: the client secret given is not the one this OAuth client has on the ERP")
}

// checkIDTokenSecret verifies that idToken was signed with client's
// secret for client. No id_token (a client without the openid scope) or
// no secret gives nothing to check.
func checkIDTokenSecret(idToken string, client connector.OAuthClient) error {
	if idToken == "" || !client.Secret.IsSet() {
		return nil
	}
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return invalidResponse("the ERP's id_token is not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Aud any `json:"aud"`
	}
	rawHeader, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	rawClaims, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(rawHeader, &header) != nil || json.Unmarshal(rawClaims, &claims) != nil {
		return invalidResponse("the ERP's id_token is not a JWT")
	}
	if header.Alg != "HS256" {
		return invalidResponse("the ERP's id_token is not signed with HS256")
	}
	mac := hmac.New(sha256.New, []byte(client.Secret.Reveal()))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(mac.Sum(nil), sig) {
		return errWrongSecret()
	}
	if !audienceIs(claims.Aud, client.ID) {
		return toolerr.New(toolerr.PermissionDenied, "the ERP issued its ID token to another OAuth client")
	}
	return nil
}

// audienceIs reports whether a JWT aud claim (a string or an array of
// strings) names id.
func audienceIs(aud any, id string) bool {
	switch a := aud.(type) {
	case string:
		return a == id
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && s == id {
				return true
			}
		}
	}
	return false
}
